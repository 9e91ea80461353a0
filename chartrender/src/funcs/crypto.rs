//! Sprig's crypto functions with real key material: `genPrivateKey genCA genSignedCert genSelfSignedCert`
//! (and their `WithKey` forms, `buildCustomCert`), `bcrypt htpasswd derivePassword encryptAES decryptAES
//! randBytes sha1sum`.
//!
//! Keys are what Sprig makes: RSA 4096 for `genPrivateKey "rsa"`, RSA 2048 for certificates, P-256 for
//! `"ecdsa"`, Ed25519 for `"ed25519"`, DSA L2048/N256 for `"dsa"`; PEM types `RSA PRIVATE KEY` (PKCS#1),
//! `EC PRIVATE KEY` (SEC1), `PRIVATE KEY` (PKCS#8), `DSA PRIVATE KEY` (OpenSSL's DSA structure). Certificates carry a random 128-bit serial, the common name, IP and DNS SANs,
//! key usages and server/client auth, valid from now for the given days; a CA signs its leaves.

use std::net::IpAddr;

use aes::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit, block_padding::NoPadding};
use base64::Engine as _;
use minijinja::Error;
use minijinja::value::Value;
use rand::RngCore as _;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType, SerialNumber,
};
use rsa::pkcs1::{DecodeRsaPrivateKey as _, EncodeRsaPrivateKey as _};
use rsa::pkcs8::{DecodePrivateKey as _, EncodePrivateKey as _, LineEnding};

use super::value::{GoMap, is_nil, list_items, map_entries, to_go_string, to_i64, type_of};
use super::{arg_str, fail, want};

/// `sha1sum s` (lower-case hex)
pub(crate) fn sha1sum(args: &[Value]) -> Result<Value, Error> {
    want("sha1sum", args, 1)?;
    let digest = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        &super::gostring::to_bytes(&arg_str(args, 0)),
    );
    Ok(Value::from(hex::encode(digest.as_ref())))
}

/// `bcrypt s`: a `$2a$` hash with Go's default cost 10.
pub(crate) fn bcrypt(args: &[Value]) -> Result<Value, Error> {
    want("bcrypt", args, 1)?;
    Ok(Value::from(bcrypt_hash(&arg_str(args, 0))))
}

fn bcrypt_hash(password: &str) -> String {
    match bcrypt::hash_with_result(password, 10) {
        Ok(parts) => parts.format_for_version(bcrypt::Version::TwoA),
        Err(e) => format!("failed to encrypt string with bcrypt: {e}"),
    }
}

/// `htpasswd user password`: `user:<bcrypt>`.
pub(crate) fn htpasswd(args: &[Value]) -> Result<Value, Error> {
    want("htpasswd", args, 2)?;
    let user = arg_str(args, 0);
    if user.contains(':') {
        return Ok(Value::from(format!("invalid username: {user}")));
    }
    Ok(Value::from(format!(
        "{user}:{}",
        bcrypt_hash(&arg_str(args, 1))
    )))
}

const MASTER_PASSWORD_SEED: &str = "com.lyndir.masterpassword";

fn password_templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

fn template_characters(class: u8) -> &'static [u8] {
    match class {
        b'V' => b"AEIOU",
        b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        b'v' => b"aeiou",
        b'c' => b"bcdfghjklmnpqrstvwxyz",
        b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        b'n' => b"0123456789",
        b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

/// `derivePassword counter type password user site`: the Master Password algorithm (scrypt, then HMAC-SHA256).
pub(crate) fn derive_password(args: &[Value]) -> Result<Value, Error> {
    want("derivePassword", args, 5)?;
    let counter = to_i64(&args[0]) as u32;
    let kind = arg_str(args, 1);
    let (password, user, site) = (arg_str(args, 2), arg_str(args, 3), arg_str(args, 4));
    let Some(templates) = password_templates(&kind) else {
        return Ok(Value::from(format!("cannot find password template {kind}")));
    };
    let mut salt = MASTER_PASSWORD_SEED.as_bytes().to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let params = scrypt::Params::new(15, 8, 2, 64).map_err(|e| fail(e.to_string()))?;
    if let Err(e) = scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key) {
        return Ok(Value::from(format!("failed to derive password: {e}")));
    }
    let mut message = MASTER_PASSWORD_SEED.as_bytes().to_vec();
    message.extend_from_slice(&(site.len() as u32).to_be_bytes());
    message.extend_from_slice(site.as_bytes());
    message.extend_from_slice(&counter.to_be_bytes());
    let seed = ring::hmac::sign(
        &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key),
        &message,
    );
    let seed = seed.as_ref();
    let template = templates[usize::from(seed[0]) % templates.len()];
    let out: String = template
        .bytes()
        .enumerate()
        .map(|(i, class)| {
            let chars = template_characters(class);
            chars[usize::from(seed[i + 1]) % chars.len()] as char
        })
        .collect();
    Ok(Value::from(out))
}

fn aes_key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let bytes = password.as_bytes();
    let len = bytes.len().min(32);
    key[..len].copy_from_slice(&bytes[..len]);
    key
}

/// `encryptAES password plaintext`: AES-256-CBC with a random IV and PKCS#7 padding, base64 of IV + ciphertext.
pub(crate) fn encrypt_aes(args: &[Value]) -> Result<Value, Error> {
    want("encryptAES", args, 2)?;
    let plaintext = arg_str(args, 1);
    if plaintext.is_empty() {
        return Ok(Value::from(""));
    }
    let key = aes_key(&arg_str(args, 0));
    let mut content = plaintext.into_bytes();
    let padding = 16 - content.len() % 16;
    content.extend(std::iter::repeat_n(padding as u8, padding));
    let mut iv = [0u8; 16];
    rand::rng().fill_bytes(&mut iv);
    let len = content.len();
    cbc::Encryptor::<aes::Aes256>::new(&key.into(), &iv.into())
        .encrypt_padded_mut::<NoPadding>(&mut content, len)
        .map_err(|e| fail(format!("error calling encryptAES: {e}")))?;
    let mut out = iv.to_vec();
    out.extend_from_slice(&content);
    Ok(Value::from(
        base64::engine::general_purpose::STANDARD.encode(out),
    ))
}

/// `decryptAES password base64`
pub(crate) fn decrypt_aes(args: &[Value]) -> Result<Value, Error> {
    want("decryptAES", args, 2)?;
    let encoded = arg_str(args, 1);
    if encoded.is_empty() {
        return Ok(Value::from(""));
    }
    let key = aes_key(&arg_str(args, 0));
    let data = base64::engine::general_purpose::STANDARD
        .decode(encoded.as_bytes())
        .map_err(|e| fail(format!("error calling decryptAES: {e}")))?;
    if data.len() < 32 || data.len() % 16 != 0 {
        return Err(fail(
            "error calling decryptAES: crypto/cipher: input not full blocks",
        ));
    }
    let (iv, cipher) = data.split_at(16);
    let mut content = cipher.to_vec();
    let iv: [u8; 16] = iv
        .try_into()
        .map_err(|_| fail("error calling decryptAES: bad IV"))?;
    cbc::Decryptor::<aes::Aes256>::new(&key.into(), &iv.into())
        .decrypt_padded_mut::<NoPadding>(&mut content)
        .map_err(|e| fail(format!("error calling decryptAES: {e}")))?;
    let padding = usize::from(content[content.len() - 1]);
    if padding > content.len() {
        return Err(fail(format!(
            "error calling decryptAES: runtime error: slice bounds out of range [:{}]",
            content.len() as i64 - padding as i64
        )));
    }
    content.truncate(content.len() - padding);
    Ok(Value::from(String::from_utf8_lossy(&content).into_owned()))
}

/// `randBytes n`: n random bytes, base64.
pub(crate) fn rand_bytes(args: &[Value]) -> Result<Value, Error> {
    want("randBytes", args, 1)?;
    let count = usize::try_from(to_i64(&args[0]))
        .map_err(|_| fail("error calling randBytes: runtime error: makeslice: len out of range"))?;
    if count > 16 * 1024 * 1024 {
        return Err(fail("error calling randBytes: more than 16 MiB requested"));
    }
    let mut buf = vec![0u8; count];
    rand::rng().fill_bytes(&mut buf);
    Ok(Value::from(
        base64::engine::general_purpose::STANDARD.encode(buf),
    ))
}

/// A private key as Sprig holds it: the PEM it prints and the PKCS#8 form rcgen signs with.
struct PrivateKey {
    pem: String,
    pair: KeyPair,
}

fn rsa_key(bits: usize) -> Result<PrivateKey, String> {
    let key = rsa::RsaPrivateKey::new(&mut rand_core::OsRng, bits)
        .map_err(|e| format!("error generating rsa key: {e}"))?;
    rsa_private_key(&key)
}

fn rsa_private_key(key: &rsa::RsaPrivateKey) -> Result<PrivateKey, String> {
    let pem = key
        .to_pkcs1_pem(LineEnding::LF)
        .map_err(|e| e.to_string())?
        .to_string();
    let der = key.to_pkcs8_der().map_err(|e| e.to_string())?;
    let pair = KeyPair::from_pkcs8_der_and_sign_algo(
        &der.as_bytes().to_vec().into(),
        &rcgen::PKCS_RSA_SHA256,
    )
    .map_err(|e| e.to_string())?;
    Ok(PrivateKey { pem, pair })
}

fn ecdsa_private_key(key: &p256::SecretKey) -> Result<PrivateKey, String> {
    let pem = key
        .to_sec1_pem(LineEnding::LF)
        .map_err(|e| e.to_string())?
        .to_string();
    let der = key.to_pkcs8_der().map_err(|e| e.to_string())?;
    let pair = KeyPair::from_pkcs8_der_and_sign_algo(
        &der.as_bytes().to_vec().into(),
        &rcgen::PKCS_ECDSA_P256_SHA256,
    )
    .map_err(|e| e.to_string())?;
    Ok(PrivateKey { pem, pair })
}

/// PKCS#8 v1 of an Ed25519 seed, as Go's `x509.MarshalPKCS8PrivateKey` writes it.
fn ed25519_private_key(seed: &[u8; 32]) -> Result<PrivateKey, String> {
    const PREFIX: [u8; 16] = [
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    let mut der = PREFIX.to_vec();
    der.extend_from_slice(seed);
    let pem = pem_block("PRIVATE KEY", &der);
    let pair = KeyPair::from_pkcs8_der_and_sign_algo(&der.into(), &rcgen::PKCS_ED25519)
        .map_err(|e| e.to_string())?;
    Ok(PrivateKey { pem, pair })
}

fn pem_block(label: &str, der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in body.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// Parses a PEM private key the way Sprig does (PKCS#8, PKCS#1 RSA, SEC1 EC), with Sprig's error texts.
fn parse_private_key(text: &str) -> Result<PrivateKey, String> {
    let block = pem_first_block(text).ok_or("no PEM data in input")?;
    match block.0.as_str() {
        "PRIVATE KEY" => {
            if let Ok(key) = rsa::RsaPrivateKey::from_pkcs8_der(&block.1) {
                return rsa_private_key(&key);
            }
            if let Ok(key) = p256::SecretKey::from_pkcs8_der(&block.1) {
                return ecdsa_private_key(&key);
            }
            if block.1.len() == 48 && block.1.starts_with(&[0x30, 0x2e]) {
                let mut seed = [0u8; 32];
                seed.copy_from_slice(&block.1[16..]);
                return ed25519_private_key(&seed);
            }
            Err("decoding PEM as PKCS#8: x509: unsupported private key type".into())
        }
        "RSA PRIVATE KEY" => rsa::RsaPrivateKey::from_pkcs1_der(&block.1)
            .map_err(|e| format!("parsing RSA private key from PEM: {e}"))
            .and_then(|k| rsa_private_key(&k)),
        "EC PRIVATE KEY" => p256::SecretKey::from_sec1_der(&block.1)
            .map_err(|e| format!("parsing EC private key from PEM: {e}"))
            .and_then(|k| ecdsa_private_key(&k)),
        other if other.ends_with(" PRIVATE KEY") => {
            Err(format!("invalid private key type {other}"))
        }
        other => Err(format!("no private key data in PEM block of type {other}")),
    }
}

/// The first PEM block: (label, DER).
fn pem_first_block(text: &str) -> Option<(String, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + 11..];
    let label_end = rest.find("-----")?;
    let label = &rest[..label_end];
    let body_start = &rest[label_end + 5..];
    let end_marker = format!("-----END {label}-----");
    let body_end = body_start.find(&end_marker)?;
    let body: String = body_start[..body_end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = base64::engine::general_purpose::STANDARD
        .decode(body.as_bytes())
        .ok()?;
    Some((label.to_string(), der))
}

/// `genPrivateKey type`: `rsa` (4096 bits), `dsa` (L2048/N256, [`super::dsa`]), `ecdsa` (P-256), `ed25519`; other
/// types print Sprig's message.
pub(crate) fn gen_private_key(args: &[Value]) -> Result<Value, Error> {
    want("genPrivateKey", args, 1)?;
    let kind = arg_str(args, 0);
    let key = match kind.as_str() {
        "" | "rsa" => rsa_key(4096),
        "ecdsa" => ecdsa_private_key(&p256::SecretKey::random(&mut rand_core::OsRng)),
        "ed25519" => {
            let mut seed = [0u8; 32];
            rand::rng().fill_bytes(&mut seed);
            ed25519_private_key(&seed)
        }
        "dsa" => {
            let der = super::dsa::DsaKey::generate(&mut rand::rng()).to_der();
            return Ok(Value::from(pem_block("DSA PRIVATE KEY", &der)));
        }
        other => return Ok(Value::from(format!("Unknown type {other}"))),
    };
    match key {
        Ok(key) => Ok(Value::from(key.pem)),
        Err(e) => Ok(Value::from(format!("failed to generate private key: {e}"))),
    }
}

/// The certificate parameters Sprig's `getBaseCertTemplate` sets.
fn base_params(
    name: &str,
    cn: &str,
    ips: Option<&Value>,
    dns: Option<&Value>,
    days: i64,
) -> Result<CertificateParams, Error> {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, cn.to_string());
    for ip in string_list(name, ips, "error parsing ip")? {
        let parsed: IpAddr = ip
            .parse()
            .map_err(|_| fail(format!("error calling {name}: error parsing ip: {ip}")))?;
        params.subject_alt_names.push(SanType::IpAddress(parsed));
    }
    for dns in string_list(name, dns, "error processing alternate dns name")? {
        let name_value = dns
            .clone()
            .try_into()
            .map_err(|e| fail(format!("error calling {name}: {dns}: {e}")))?;
        params.subject_alt_names.push(SanType::DnsName(name_value));
    }
    let mut serial = [0u8; 16];
    rand::rng().fill_bytes(&mut serial);
    serial[0] &= 0x7f;
    params.serial_number = Some(SerialNumber::from_slice(&serial));
    let now = time::OffsetDateTime::now_utc();
    params.not_before = now;
    params.not_after = now + time::Duration::days(days);
    params.key_usages = vec![
        KeyUsagePurpose::KeyEncipherment,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    params.is_ca = IsCa::ExplicitNoCa;
    params.use_authority_key_identifier_extension = false;
    Ok(params)
}

/// A list argument of strings (nil is empty), with Sprig's error for other elements.
fn string_list(name: &str, value: Option<&Value>, what: &str) -> Result<Vec<String>, Error> {
    let Some(value) = value.filter(|v| !is_nil(v)) else {
        return Ok(Vec::new());
    };
    let items = list_items(value).ok_or_else(|| {
        fail(format!(
            "wrong type for value; expected []interface {{}}; got {}",
            type_of(value)
        ))
    })?;
    items
        .iter()
        .map(|item| {
            item.as_str().map(str::to_string).ok_or_else(|| {
                fail(format!(
                    "error calling {name}: {what}: {} is not a string",
                    to_go_string(item)
                ))
            })
        })
        .collect()
}

fn certificate_value(cert: &str, key: &str) -> Value {
    GoMap::value(
        [
            ("Cert".to_string(), Value::from(cert)),
            ("Key".to_string(), Value::from(key)),
        ]
        .into_iter()
        .collect(),
    )
}

fn cert_error(name: &str, e: impl std::fmt::Display) -> Error {
    fail(format!(
        "error calling {name}: error creating certificate: {e}"
    ))
}

fn ca_certificate(name: &str, cn: &str, days: i64, key: PrivateKey) -> Result<Value, Error> {
    let mut params = base_params(name, cn, None, None, days)?;
    params.key_usages.push(KeyUsagePurpose::KeyCertSign);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params
        .self_signed(&key.pair)
        .map_err(|e| cert_error(name, e))?;
    Ok(certificate_value(&cert.pem(), &key.pem))
}

fn key_or_error(name: &str, key: Result<PrivateKey, String>) -> Result<PrivateKey, Error> {
    key.map_err(|e| fail(format!("error calling {name}: {e}")))
}

/// `genCA cn days`
pub(crate) fn gen_ca(args: &[Value]) -> Result<Value, Error> {
    want("genCA", args, 2)?;
    let key = key_or_error("genCA", rsa_key(2048))?;
    ca_certificate("genCA", &arg_str(args, 0), to_i64(&args[1]), key)
}

/// `genCAWithKey cn days keyPem`
pub(crate) fn gen_ca_with_key(args: &[Value]) -> Result<Value, Error> {
    want("genCAWithKey", args, 3)?;
    let key = parse_private_key(&arg_str(args, 2)).map_err(|e| format!("parsing private key: {e}"));
    let key = key_or_error("genCAWithKey", key)?;
    ca_certificate("genCAWithKey", &arg_str(args, 0), to_i64(&args[1]), key)
}

fn self_signed(name: &str, args: &[Value], key: PrivateKey) -> Result<Value, Error> {
    let params = base_params(
        name,
        &arg_str(args, 0),
        args.get(1),
        args.get(2),
        to_i64(&args[3]),
    )?;
    let cert = params
        .self_signed(&key.pair)
        .map_err(|e| cert_error(name, e))?;
    Ok(certificate_value(&cert.pem(), &key.pem))
}

/// `genSelfSignedCert cn ips dns days`
pub(crate) fn gen_self_signed_cert(args: &[Value]) -> Result<Value, Error> {
    want("genSelfSignedCert", args, 4)?;
    let key = key_or_error("genSelfSignedCert", rsa_key(2048))?;
    self_signed("genSelfSignedCert", args, key)
}

/// `genSelfSignedCertWithKey cn ips dns days keyPem`
pub(crate) fn gen_self_signed_cert_with_key(args: &[Value]) -> Result<Value, Error> {
    want("genSelfSignedCertWithKey", args, 5)?;
    let key = parse_private_key(&arg_str(args, 4)).map_err(|e| format!("parsing private key: {e}"));
    let key = key_or_error("genSelfSignedCertWithKey", key)?;
    self_signed("genSelfSignedCertWithKey", args, key)
}

fn signed(name: &str, args: &[Value], key: PrivateKey) -> Result<Value, Error> {
    let ca = map_entries(&args[4]).ok_or_else(|| {
        fail(format!(
            "wrong type for value; expected sprig.certificate; got {}",
            type_of(&args[4])
        ))
    })?;
    let field = |k: &str| ca.get(k).map(to_go_string).unwrap_or_default();
    let (ca_cert, ca_key) = (field("Cert"), field("Key"));
    let signer = parse_private_key(&ca_key).map_err(|e| {
        fail(format!(
            "error calling {name}: error parsing private key: {e}"
        ))
    })?;
    let issuer = Issuer::from_ca_cert_pem(&ca_cert, signer.pair).map_err(|e| {
        fail(format!(
            "error calling {name}: error parsing certificate: decodedSignerCert.Bytes: {e}"
        ))
    })?;
    let params = base_params(
        name,
        &arg_str(args, 0),
        args.get(1),
        args.get(2),
        to_i64(&args[3]),
    )?;
    let cert = params
        .signed_by(&key.pair, &issuer)
        .map_err(|e| cert_error(name, e))?;
    Ok(certificate_value(&cert.pem(), &key.pem))
}

/// `genSignedCert cn ips dns days ca`
pub(crate) fn gen_signed_cert(args: &[Value]) -> Result<Value, Error> {
    want("genSignedCert", args, 5)?;
    let key = key_or_error("genSignedCert", rsa_key(2048))?;
    signed("genSignedCert", args, key)
}

/// `genSignedCertWithKey cn ips dns days ca keyPem`
pub(crate) fn gen_signed_cert_with_key(args: &[Value]) -> Result<Value, Error> {
    want("genSignedCertWithKey", args, 6)?;
    let key = parse_private_key(&arg_str(args, 5)).map_err(|e| format!("parsing private key: {e}"));
    let key = key_or_error("genSignedCertWithKey", key)?;
    signed("genSignedCertWithKey", args, key)
}

/// `buildCustomCert certBase64 keyBase64`: checks both and returns them as a certificate.
pub(crate) fn build_custom_cert(args: &[Value]) -> Result<Value, Error> {
    want("buildCustomCert", args, 2)?;
    let decode = |i: usize, what: &str| {
        base64::engine::general_purpose::STANDARD
            .decode(arg_str(args, i).as_bytes())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|_| {
                fail(format!(
                    "error calling buildCustomCert: unable to decode base64 {what}"
                ))
            })
    };
    let cert = decode(0, "certificate")?;
    let key = decode(1, "private key")?;
    let (label, der) = pem_first_block(&cert)
        .ok_or_else(|| fail("error calling buildCustomCert: unable to decode certificate"))?;
    if label != "CERTIFICATE" || x509_parser::parse_x509_certificate(&der).is_err() {
        return Err(fail(
            "error calling buildCustomCert: error parsing certificate: decodedCert.Bytes: malformed certificate",
        ));
    }
    parse_private_key(&key).map_err(|e| {
        fail(format!(
            "error calling buildCustomCert: error parsing private key: {e}"
        ))
    })?;
    Ok(certificate_value(&cert, &key))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Value {
        Value::from(v)
    }

    #[test]
    fn sha1_and_derived_passwords_match_go() {
        assert_eq!(
            sha1sum(&[s("garden")]).unwrap().to_string(),
            "b1ade531057f51c2992479335d03b774afdeb6fa"
        );
        let derived = derive_password(&[
            Value::from(2),
            s("maximum"),
            s("secret"),
            s("op"),
            s("garden.example.org"),
        ])
        .unwrap();
        assert_eq!(derived.to_string(), "ZSPkmG2Q4TY5OPLHQu8[");
        assert_eq!(
            derive_password(&[Value::from(1), s("nope"), s("p"), s("u"), s("s")])
                .unwrap()
                .to_string(),
            "cannot find password template nope"
        );
    }

    #[test]
    fn aes_round_trips_and_rejects_garbage() {
        let key = s("fedcba9876543210fedcba9876543210");
        let sealed = encrypt_aes(&[key.clone(), s("plaintext")]).unwrap();
        assert_eq!(
            decrypt_aes(&[key.clone(), sealed]).unwrap().to_string(),
            "plaintext"
        );
        assert!(decrypt_aes(&[key.clone(), s("!!!")]).is_err());
        assert!(decrypt_aes(&[key, s("AAAA")]).is_err());
    }

    #[test]
    fn bcrypt_hashes_verify() {
        let hash = bcrypt(&[s("pw")]).unwrap().to_string();
        assert!(hash.starts_with("$2a$10$"));
        assert!(::bcrypt::verify("pw", &hash).unwrap());
        assert_eq!(
            htpasswd(&[s("a:b"), s("pw")]).unwrap().to_string(),
            "invalid username: a:b"
        );
    }

    #[test]
    fn private_keys_have_sprig_pem_types() {
        let ec = gen_private_key(&[s("ecdsa")]).unwrap().to_string();
        assert!(ec.starts_with("-----BEGIN EC PRIVATE KEY-----\n"));
        assert!(parse_private_key(&ec).is_ok());
        let ed = gen_private_key(&[s("ed25519")]).unwrap().to_string();
        assert!(ed.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        assert!(parse_private_key(&ed).is_ok());
        assert_eq!(
            gen_private_key(&[s("x")]).unwrap().to_string(),
            "Unknown type x"
        );
    }
}
