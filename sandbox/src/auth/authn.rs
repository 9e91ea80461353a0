//! Request authentication like kube-apiserver's: client certificates, bootstrap tokens, anonymous
//! requests, and the user impersonation headers.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use sha2::Digest;
use x509_parser::prelude::{FromDer, X509Certificate};

use super::client_cert::ClientCertificate;

/// Group of every authenticated user.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// Group of anonymous requests.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// User name of anonymous requests.
pub const ANONYMOUS: &str = "system:anonymous";
/// Group whose members are allowed everything.
pub const SYSTEM_MASTERS: &str = "system:masters";
/// Default group of bootstrap token users.
pub const BOOTSTRAPPERS: &str = "system:bootstrappers";
/// Secret type of bootstrap tokens.
pub const BOOTSTRAP_TOKEN_SECRET_TYPE: &str = "bootstrap.kubernetes.io/token";
/// Prefix of service account user names.
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
/// The user extra naming the credential a request authenticated with.
pub const CREDENTIAL_ID_EXTRA: &str = "authentication.kubernetes.io/credential-id";
/// Prefix of the headers carrying impersonated user extras.
const IMPERSONATE_EXTRA_PREFIX: &str = "impersonate-extra-";

/// Errors of request authentication; every variant maps to an HTTP error response.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthnError {
    /// A bearer token was presented but no authenticator accepted it (401 Unauthorized).
    #[error("invalid bearer token")]
    InvalidBearerToken,
    /// The client certificate is not signed by the client CA or not valid now (401
    /// Unauthorized, like kube-apiserver's x509 authenticator; anonymous access does not apply).
    #[error("verify client certificate: {reason}")]
    UnverifiedClientCertificate {
        /// What the verifier said.
        reason: String,
    },
    /// The verified peer certificate could not be parsed (401 Unauthorized).
    #[error("parse client certificate: {reason}")]
    InvalidClientCertificate {
        /// What the parser said.
        reason: String,
    },
    /// Impersonation headers other than the user were sent without `Impersonate-User`
    /// (kube-apiserver answers 500 with this message).
    #[error("requested {requested} without impersonating a user")]
    ImpersonationWithoutUser {
        /// Description of the requested impersonation.
        requested: String,
    },
    /// An impersonation header value is not valid UTF-8 (400 Bad Request).
    #[error("invalid value of header {header}")]
    InvalidHeader {
        /// The header name.
        header: String,
    },
}

impl AuthnError {
    /// HTTP status code kube-apiserver answers for this error.
    pub fn status_code(&self) -> u16 {
        match self {
            Self::InvalidBearerToken
            | Self::InvalidClientCertificate { .. }
            | Self::UnverifiedClientCertificate { .. } => 401,
            Self::ImpersonationWithoutUser { .. } => 500,
            Self::InvalidHeader { .. } => 400,
        }
    }
}

/// The authenticated identity of a request.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// User name.
    pub username: String,
    /// UID (empty for certificate and bootstrap token users).
    pub uid: String,
    /// Groups, including `system:authenticated` or `system:unauthenticated`.
    pub groups: Vec<String>,
    /// Extra attributes.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The anonymous user.
    pub fn anonymous() -> Self {
        Self {
            username: ANONYMOUS.to_owned(),
            groups: vec![ALL_UNAUTHENTICATED.to_owned()],
            ..Self::default()
        }
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }
}

/// Read access to stored Secrets, used to look up bootstrap tokens.
pub trait SecretReader {
    /// The Secret `namespace/name` as stored (with base64 `data`), if it exists.
    fn secret(&self, namespace: &str, name: &str) -> Option<serde_json::Value>;
}

/// client_certificate: the connection's certificate as judged against the client CA.
/// authorization: the Authorization header value.
/// Ok(user) incl. system:anonymous / system:authenticated groups as kube-apiserver does; Err => 401 Unauthorized.
///
/// Like kube-apiserver's authenticator union: a verified client certificate with a common name
/// wins over a token; a bearer token that no authenticator accepts is an error; a certificate the
/// CA did not sign is an error unless a token authenticates the request (never anonymous); no
/// credentials at all is anonymous.
///
/// # Errors
/// [`AuthnError::InvalidBearerToken`] for a rejected token,
/// [`AuthnError::UnverifiedClientCertificate`] for an untrusted certificate without a token,
/// [`AuthnError::InvalidClientCertificate`] when the certificate cannot be parsed.
pub fn authenticate(
    client_certificate: Option<&ClientCertificate>,
    authorization: Option<&str>,
    secrets: &dyn SecretReader,
    now: jiff::Timestamp,
) -> Result<UserInfo, AuthnError> {
    if let Some(ClientCertificate::Verified(der)) = client_certificate
        && let Some(user) = certificate_user(der)?
    {
        return Ok(with_authenticated_group(user));
    }
    if let Some(token) = authorization.and_then(bearer_token) {
        return bootstrap_token_user(token, secrets, now)
            .map(with_authenticated_group)
            .ok_or(AuthnError::InvalidBearerToken);
    }
    if let Some(ClientCertificate::Unverified { reason }) = client_certificate {
        return Err(AuthnError::UnverifiedClientCertificate {
            reason: reason.clone(),
        });
    }
    Ok(UserInfo::anonymous())
}

/// The user a client certificate names: CN is the user, each O a group. `None` without a CN.
fn certificate_user(der: &[u8]) -> Result<Option<UserInfo>, AuthnError> {
    let (_, cert) =
        X509Certificate::from_der(der).map_err(|error| AuthnError::InvalidClientCertificate {
            reason: error.to_string(),
        })?;
    let subject = cert.subject();
    let common_name = subject
        .iter_common_name()
        .next()
        .and_then(|attribute| attribute.as_str().ok())
        .unwrap_or_default();
    if common_name.is_empty() {
        return Ok(None);
    }
    let groups = subject
        .iter_organization()
        .filter_map(|attribute| attribute.as_str().ok())
        .map(str::to_owned)
        .collect();
    // kube-apiserver >= 1.32 names the credential: the SHA-256 of the certificate.
    let digest: String = sha2::Sha256::digest(der)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(Some(UserInfo {
        username: common_name.to_owned(),
        groups,
        extra: BTreeMap::from([(
            CREDENTIAL_ID_EXTRA.to_owned(),
            vec![format!("X509SHA256={digest}")],
        )]),
        ..UserInfo::default()
    }))
}

/// The token of an `Authorization: Bearer <token>` header; `None` for other schemes or an empty token.
fn bearer_token(authorization: &str) -> Option<&str> {
    let mut parts = authorization.splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Adds `system:authenticated` unless the user already has it or `system:unauthenticated`.
fn with_authenticated_group(mut user: UserInfo) -> UserInfo {
    if !user.in_group(ALL_AUTHENTICATED) && !user.in_group(ALL_UNAUTHENTICATED) {
        user.groups.push(ALL_AUTHENTICATED.to_owned());
    }
    user
}

/// Splits a bootstrap token `<6 chars>.<16 chars>` (lower-case alphanumerics) into id and secret.
pub fn parse_bootstrap_token(token: &str) -> Option<(&str, &str)> {
    let (id, secret) = token.split_once('.')?;
    let valid = |part: &str, len: usize| {
        part.len() == len
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    (valid(id, 6) && valid(secret, 16)).then_some((id, secret))
}

/// The bootstrap token user for `token`, following kube-apiserver's bootstrap token authenticator.
fn bootstrap_token_user(
    token: &str,
    secrets: &dyn SecretReader,
    now: jiff::Timestamp,
) -> Option<UserInfo> {
    let (id, token_secret) = parse_bootstrap_token(token)?;
    let secret = secrets.secret("kube-system", &format!("bootstrap-token-{id}"))?;
    if secret.pointer("/metadata/deletionTimestamp").is_some()
        || secret.get("type").and_then(|t| t.as_str()) != Some(BOOTSTRAP_TOKEN_SECRET_TYPE)
    {
        return None;
    }
    let data = |key: &str| secret_data(&secret, key);
    if !constant_time_eq(data("token-secret").as_bytes(), token_secret.as_bytes())
        || data("token-id") != id
        || token_expired(&data("expiration"), now)
        || data("usage-bootstrap-authentication") != "true"
    {
        return None;
    }
    let groups = bootstrap_groups(&data("auth-extra-groups"))?;
    Some(UserInfo {
        username: format!("system:bootstrap:{id}"),
        groups,
        ..UserInfo::default()
    })
}

/// A Secret's `data[key]` decoded from base64 (or `stringData[key]`), empty when absent or invalid.
fn secret_data(secret: &serde_json::Value, key: &str) -> String {
    if let Some(encoded) = secret
        .get("data")
        .and_then(|d| d.get(key))
        .and_then(|v| v.as_str())
    {
        return STANDARD
            .decode(encoded)
            .ok()
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .unwrap_or_default();
    }
    secret
        .get("stringData")
        .and_then(|d| d.get(key))
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Whether a token with this `expiration` value has expired at `now`; unparseable values count as expired.
pub fn token_expired(expiration: &str, now: jiff::Timestamp) -> bool {
    if expiration.is_empty() {
        return false;
    }
    match expiration.parse::<jiff::Timestamp>() {
        Ok(expires) => expires <= now,
        Err(_) => true,
    }
}

/// `system:bootstrappers` plus the valid `auth-extra-groups`, sorted and deduplicated like
/// kube-apiserver; `None` when an extra group is not `system:bootstrappers:<name>`.
pub fn bootstrap_groups(extra_groups: &str) -> Option<Vec<String>> {
    let mut groups = BTreeSet::from([BOOTSTRAPPERS.to_owned()]);
    if !extra_groups.is_empty() {
        for group in extra_groups.split(',') {
            if !valid_bootstrap_group(group) {
                return None;
            }
            groups.insert(group.to_owned());
        }
    }
    Some(groups.into_iter().collect())
}

/// `^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$`
fn valid_bootstrap_group(group: &str) -> bool {
    let Some(rest) = group.strip_prefix("system:bootstrappers:") else {
        return false;
    };
    let bytes = rest.as_bytes();
    let Some((last, body)) = bytes.split_last() else {
        return false;
    };
    body.len() <= 255
        && (last.is_ascii_lowercase() || last.is_ascii_digit())
        && body
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b':' || *b == b'-')
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What the `Impersonate-*` headers of a request ask for.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ImpersonationRequest {
    /// `Impersonate-User`.
    pub user: String,
    /// Every `Impersonate-Group` header, in order.
    pub groups: Vec<String>,
    /// `Impersonate-Extra-<key>` headers: key unescaped and lower-cased, values in order.
    pub extra: BTreeMap<String, Vec<String>>,
}

/// Reads the impersonation headers; `Ok(None)` when there are none.
///
/// # Errors
/// [`AuthnError::ImpersonationWithoutUser`] when groups or extras come without a user,
/// [`AuthnError::InvalidHeader`] for non-UTF-8 values.
pub fn impersonation_request(
    headers: &http::HeaderMap,
) -> Result<Option<ImpersonationRequest>, AuthnError> {
    let text = |name: &str, value: &http::HeaderValue| {
        value
            .to_str()
            .map(str::to_owned)
            .map_err(|_| AuthnError::InvalidHeader {
                header: name.to_owned(),
            })
    };
    let user = match headers.get("impersonate-user") {
        Some(value) => text("Impersonate-User", value)?,
        None => String::new(),
    };
    let groups = headers
        .get_all("impersonate-group")
        .iter()
        .map(|value| text("Impersonate-Group", value))
        .collect::<Result<Vec<_>, _>>()?;
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(IMPERSONATE_EXTRA_PREFIX) {
            extra
                .entry(percent_decode(key).to_lowercase())
                .or_default()
                .push(text(name.as_str(), value)?);
        }
    }
    let has_uid = headers.contains_key("impersonate-uid");
    if user.is_empty() {
        if groups.is_empty() && extra.is_empty() && !has_uid {
            return Ok(None);
        }
        let mut requested: Vec<String> = groups.iter().map(|g| format!("group {g:?}")).collect();
        requested.extend(extra.iter().map(|(k, v)| format!("extra {k:?}={v:?}")));
        if has_uid {
            requested.push("uid".to_owned());
        }
        return Err(AuthnError::ImpersonationWithoutUser {
            requested: format!("[{}]", requested.join(", ")),
        });
    }
    Ok(Some(ImpersonationRequest {
        user,
        groups,
        extra,
    }))
}

/// The user a request acts as once its impersonation was authorized, built like kube-apiserver:
/// service accounts get their groups when none were requested, `system:authenticated`
/// (or `system:unauthenticated` for `system:anonymous`) is added.
pub fn impersonated_user(request: &ImpersonationRequest) -> UserInfo {
    let mut groups = request.groups.clone();
    if groups.is_empty()
        && let Some((namespace, _)) = service_account_name(&request.user)
    {
        groups = vec![
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
        ];
    }
    if request.user == ANONYMOUS {
        if !groups.iter().any(|g| g == ALL_UNAUTHENTICATED) {
            groups.push(ALL_UNAUTHENTICATED.to_owned());
        }
    } else if !groups
        .iter()
        .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
    {
        groups.push(ALL_AUTHENTICATED.to_owned());
    }
    UserInfo {
        username: request.user.clone(),
        uid: String::new(),
        groups,
        extra: request.extra.clone(),
    }
}

/// `(namespace, name)` of a `system:serviceaccount:<namespace>:<name>` user name.
pub fn service_account_name(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix(SERVICE_ACCOUNT_PREFIX)?;
    let (namespace, name) = rest.split_once(':')?;
    (!namespace.is_empty() && !name.is_empty() && !name.contains(':')).then_some((namespace, name))
}

/// Decodes `%XX` escapes (as in `Impersonate-Extra-` keys); invalid escapes stay as they are.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = text.get(i + 1..i + 3)
            && let Ok(byte) = u8::from_str_radix(hex, 16)
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Duration;

    use serde_json::json;

    use crate::auth::pki::CertificateAuthority;

    struct Secrets(Vec<serde_json::Value>);

    impl SecretReader for Secrets {
        fn secret(&self, namespace: &str, name: &str) -> Option<serde_json::Value> {
            self.0
                .iter()
                .find(|s| s["metadata"]["namespace"] == namespace && s["metadata"]["name"] == name)
                .cloned()
        }
    }

    fn token_secret(id: &str, secret: &str, extra: &[(&str, &str)]) -> serde_json::Value {
        let mut data = serde_json::Map::new();
        let mut put = |k: &str, v: &str| {
            data.insert(k.to_owned(), json!(STANDARD.encode(v)));
        };
        put("token-id", id);
        put("token-secret", secret);
        put("usage-bootstrap-authentication", "true");
        for (k, v) in extra {
            put(k, v);
        }
        json!({
            "metadata": {"namespace": "kube-system", "name": format!("bootstrap-token-{id}")},
            "type": BOOTSTRAP_TOKEN_SECRET_TYPE,
            "data": data,
        })
    }

    fn now() -> jiff::Timestamp {
        "2024-05-01T12:00:00Z".parse().unwrap()
    }

    fn auth(token: &str, secrets: &Secrets) -> Result<UserInfo, AuthnError> {
        authenticate(None, Some(&format!("Bearer {token}")), secrets, now())
    }

    #[test]
    fn bootstrap_token_authenticates_as_bootstrap_user() {
        let secrets = Secrets(vec![token_secret("abc123", "0123456789abcdef", &[])]);
        let user = auth("abc123.0123456789abcdef", &secrets).unwrap();
        assert_eq!(user.username, "system:bootstrap:abc123");
        assert_eq!(user.groups, vec![BOOTSTRAPPERS, ALL_AUTHENTICATED]);
        assert_eq!(user.uid, "");
    }

    #[test]
    fn bootstrap_token_is_rejected_when_secret_is_wrong_or_missing() {
        let secrets = Secrets(vec![token_secret("abc123", "0123456789abcdef", &[])]);
        for token in [
            "abc123.wrongwrongwrongw",
            "zzz999.0123456789abcdef",
            "not-a-token",
            "ABC123.0123456789ABCDEF",
        ] {
            assert_eq!(
                auth(token, &secrets),
                Err(AuthnError::InvalidBearerToken),
                "{token}"
            );
        }
    }

    #[test]
    fn bootstrap_token_is_rejected_when_expired_or_not_for_authentication() {
        let table = [
            (vec![("expiration", "2024-05-01T11:59:59Z")], false),
            (vec![("expiration", "2024-05-01T12:00:01Z")], true),
            (vec![("expiration", "tomorrow")], false),
            (vec![("usage-bootstrap-authentication", "false")], false),
            (vec![("auth-extra-groups", "system:bootstrappers:ok")], true),
            (vec![("auth-extra-groups", "bad-group")], false),
        ];
        for (extra, accepted) in table {
            let secrets = Secrets(vec![token_secret("abc123", "0123456789abcdef", &extra)]);
            let result = auth("abc123.0123456789abcdef", &secrets);
            assert_eq!(result.is_ok(), accepted, "{extra:?}");
        }
    }

    #[test]
    fn bootstrap_token_is_rejected_when_secret_has_wrong_type() {
        let mut secret = token_secret("abc123", "0123456789abcdef", &[]);
        secret["type"] = json!("Opaque");
        let secrets = Secrets(vec![secret]);
        assert!(auth("abc123.0123456789abcdef", &secrets).is_err());
    }

    #[test]
    fn extra_groups_are_sorted_and_deduplicated() {
        assert_eq!(
            bootstrap_groups(
                "system:bootstrappers:b,system:bootstrappers:a,system:bootstrappers:b"
            ),
            Some(vec![
                "system:bootstrappers".to_owned(),
                "system:bootstrappers:a".to_owned(),
                "system:bootstrappers:b".to_owned()
            ])
        );
        assert_eq!(bootstrap_groups("system:bootstrappers:-"), None);
    }

    #[test]
    fn request_without_credentials_is_anonymous() {
        let user = authenticate(None, None, &Secrets(vec![]), now()).unwrap();
        assert_eq!(user.username, ANONYMOUS);
        assert_eq!(user.groups, vec![ALL_UNAUTHENTICATED]);
        let basic = authenticate(None, Some("Basic YTpi"), &Secrets(vec![]), now()).unwrap();
        assert_eq!(basic.username, ANONYMOUS);
    }

    #[test]
    fn client_certificate_names_user_and_groups_and_wins_over_token() {
        let ca = CertificateAuthority::generate("ca").unwrap();
        let (cert_pem, _) = ca
            .issue_client_certificate(
                "admin",
                &["system:masters".into()],
                Duration::from_secs(600),
            )
            .unwrap();
        let verified = judged(&ca, &cert_pem);
        assert!(matches!(verified, ClientCertificate::Verified(_)));
        let user = authenticate(
            Some(&verified),
            Some("Bearer abc123.0123456789abcdef"),
            &Secrets(vec![]),
            now(),
        )
        .unwrap();
        assert_eq!(user.username, "admin");
        assert_eq!(user.groups, vec![SYSTEM_MASTERS, ALL_AUTHENTICATED]);
        let credential = &user.extra[CREDENTIAL_ID_EXTRA];
        assert_eq!(credential.len(), 1);
        assert!(credential[0].starts_with("X509SHA256=") && credential[0].len() == 11 + 64);
    }

    /// The client certificate `pem` as a server trusting `trust`'s CA judges it.
    fn judged(trust: &CertificateAuthority, pem: &str) -> ClientCertificate {
        use rustls::pki_types::pem::PemObject;
        let der = rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
        let verifier = trust.client_trust().unwrap();
        ClientCertificate::judge(
            verifier.as_ref(),
            &[der],
            rustls::pki_types::UnixTime::now(),
        )
        .unwrap()
    }

    #[test]
    fn certificate_from_another_ca_is_unauthorized_unless_a_token_authenticates() {
        let (ours, theirs) = (
            CertificateAuthority::generate("ours").unwrap(),
            CertificateAuthority::generate("theirs").unwrap(),
        );
        let (foreign_pem, _) = theirs
            .issue_client_certificate(
                "admin",
                &["system:masters".into()],
                Duration::from_secs(600),
            )
            .unwrap();
        let foreign = judged(&ours, &foreign_pem);
        assert!(
            matches!(foreign, ClientCertificate::Unverified { .. }),
            "{foreign:?}"
        );
        let token = "abcdef.0123456789abcdef";
        let secrets = Secrets(vec![token_secret("abcdef", "0123456789abcdef", &[])]);
        // Authorization header sent beside the foreign certificate -> user or 401
        let cases: [(Option<String>, Result<&str, u16>); 4] = [
            (None, Err(401)),
            (Some("Basic YTpi".into()), Err(401)),
            (Some("Bearer zzzzzz.0123456789abcdef".into()), Err(401)),
            (
                Some(format!("Bearer {token}")),
                Ok("system:bootstrap:abcdef"),
            ),
        ];
        for (authorization, want) in cases {
            let got = authenticate(Some(&foreign), authorization.as_deref(), &secrets, now())
                .map(|user| user.username)
                .map_err(|error| error.status_code());
            assert_eq!(got.as_deref().map_err(|c| *c), want, "{authorization:?}");
        }
    }

    #[test]
    fn impersonation_headers_are_collected() {
        let mut headers = http::HeaderMap::new();
        headers.insert("Impersonate-User", "alice".parse().unwrap());
        headers.append("Impersonate-Group", "a".parse().unwrap());
        headers.append("Impersonate-Group", "b".parse().unwrap());
        headers.append("Impersonate-Extra-Scopes%2Fx", "one".parse().unwrap());
        let request = impersonation_request(&headers).unwrap().unwrap();
        assert_eq!(request.user, "alice");
        assert_eq!(request.groups, vec!["a", "b"]);
        assert_eq!(request.extra["scopes/x"], vec!["one"]);
        let user = impersonated_user(&request);
        assert_eq!(user.groups, vec!["a", "b", ALL_AUTHENTICATED]);
    }

    #[test]
    fn impersonating_groups_without_user_is_an_error() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(impersonation_request(&headers), Ok(None));
        headers.insert("Impersonate-Group", "a".parse().unwrap());
        let err = impersonation_request(&headers).unwrap_err();
        assert!(matches!(err, AuthnError::ImpersonationWithoutUser { .. }));
        assert_eq!(err.status_code(), 500);
    }

    #[test]
    fn impersonated_service_account_gets_its_groups() {
        let request = ImpersonationRequest {
            user: "system:serviceaccount:ns1:sa".into(),
            ..ImpersonationRequest::default()
        };
        let user = impersonated_user(&request);
        assert_eq!(
            user.groups,
            vec![
                "system:serviceaccounts",
                "system:serviceaccounts:ns1",
                ALL_AUTHENTICATED
            ]
        );
        let anonymous = impersonated_user(&ImpersonationRequest {
            user: ANONYMOUS.into(),
            ..ImpersonationRequest::default()
        });
        assert_eq!(anonymous.groups, vec![ALL_UNAUTHENTICATED]);
    }
}
