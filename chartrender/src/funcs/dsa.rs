//! DSA keys for `genPrivateKey "dsa"`: parameters and key generated the way Go's `crypto/dsa` does for Sprig
//! (L = 2048, N = 256), encoded as the DER that Sprig puts into a `DSA PRIVATE KEY` PEM block (OpenSSL's
//! `SEQUENCE { version 0, p, q, g, y, x }`).

use num_bigint_dig::BigUint;
use num_bigint_dig::prime::probably_prime;
use rand::RngCore;

/// Bits of the prime modulus p.
const L_BITS: usize = 2048;
/// Bits of the subgroup order q.
const N_BITS: usize = 256;
/// Miller–Rabin rounds Go's `dsa.GenerateParameters` asks for.
const PRIME_ROUNDS: usize = 64;

/// A DSA private key with its domain parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DsaKey {
    pub(crate) p: BigUint,
    pub(crate) q: BigUint,
    pub(crate) g: BigUint,
    pub(crate) y: BigUint,
    pub(crate) x: BigUint,
}

impl DsaKey {
    /// A fresh key over fresh parameters (`dsa.GenerateParameters` with `L2048N256`, then `dsa.GenerateKey`).
    pub(crate) fn generate(rng: &mut impl RngCore) -> Self {
        let (p, q) = primes(rng);
        let g = generator(&p, &q);
        let x = private_exponent(rng, &q);
        let y = g.modpow(&x, &p);
        Self { p, q, g, y, x }
    }

    /// The DER body of the `DSA PRIVATE KEY` block.
    pub(crate) fn to_der(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for n in [
            &BigUint::from(0u8),
            &self.p,
            &self.q,
            &self.g,
            &self.y,
            &self.x,
        ] {
            der_element(&mut body, 0x02, &der_integer(n));
        }
        let mut out = Vec::with_capacity(body.len() + 4);
        der_element(&mut out, 0x30, &body);
        out
    }
}

/// q: a random N-bit prime; p: an L-bit prime with q dividing p − 1 (up to 4·L tries per q, as Go does).
fn primes(rng: &mut impl RngCore) -> (BigUint, BigUint) {
    let one = BigUint::from(1u8);
    let mut q_bytes = vec![0u8; N_BITS / 8];
    let mut p_bytes = vec![0u8; L_BITS / 8];
    loop {
        rng.fill_bytes(&mut q_bytes);
        set_top_and_bottom_bits(&mut q_bytes);
        let q = BigUint::from_bytes_be(&q_bytes);
        if !probably_prime(&q, PRIME_ROUNDS) {
            continue;
        }
        for _ in 0..4 * L_BITS {
            rng.fill_bytes(&mut p_bytes);
            set_top_and_bottom_bits(&mut p_bytes);
            let candidate = BigUint::from_bytes_be(&p_bytes);
            // p ≡ 1 (mod q): subtract (p mod q) − 1 (add 1 when q divides the candidate).
            let remainder = &candidate % &q;
            let p = if remainder >= one {
                candidate - (remainder - &one)
            } else {
                candidate + &one
            };
            if p.bits() < L_BITS || !probably_prime(&p, PRIME_ROUNDS) {
                continue;
            }
            return (p, q);
        }
    }
}

fn set_top_and_bottom_bits(bytes: &mut [u8]) {
    if let Some(last) = bytes.last_mut() {
        *last |= 1;
    }
    if let Some(first) = bytes.first_mut() {
        *first |= 0x80;
    }
}

/// g = h^((p − 1) / q) mod p for the first h from 2 that does not give 1.
fn generator(p: &BigUint, q: &BigUint) -> BigUint {
    let one = BigUint::from(1u8);
    let exponent = (p - &one) / q;
    let mut h = BigUint::from(2u8);
    loop {
        let g = h.modpow(&exponent, p);
        if g != one {
            return g;
        }
        h += &one;
    }
}

/// x: uniform in [1, q) from N/8 random bytes, drawn again when out of range.
fn private_exponent(rng: &mut impl RngCore, q: &BigUint) -> BigUint {
    let mut bytes = vec![0u8; q.bits() / 8];
    loop {
        rng.fill_bytes(&mut bytes);
        let x = BigUint::from_bytes_be(&bytes);
        if x != BigUint::from(0u8) && &x < q {
            return x;
        }
    }
}

/// The content octets of a DER INTEGER for a non-negative number (a leading zero keeps it positive).
fn der_integer(n: &BigUint) -> Vec<u8> {
    let mut bytes = n.to_bytes_be();
    if bytes.is_empty() {
        bytes.push(0);
    }
    if bytes[0] & 0x80 != 0 {
        bytes.insert(0, 0);
    }
    bytes
}

/// Appends a DER element: tag, definite length, content.
fn der_element(out: &mut Vec<u8>, tag: u8, content: &[u8]) {
    out.push(tag);
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let len_bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | len_bytes.len() as u8);
        out.extend_from_slice(&len_bytes);
    }
    out.extend_from_slice(content);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn der_integers_and_lengths_follow_der() {
        let cases: [(u64, &[u8]); 4] =
            [(0, &[0]), (1, &[1]), (0x7f, &[0x7f]), (0x80, &[0x00, 0x80])];
        for (n, want) in cases {
            assert_eq!(der_integer(&BigUint::from(n)), want, "{n}");
        }
        let mut short = Vec::new();
        der_element(&mut short, 0x02, &[5]);
        assert_eq!(short, [0x02, 1, 5]);
        let mut long = Vec::new();
        der_element(&mut long, 0x30, &[0u8; 300]);
        assert_eq!(&long[..4], &[0x30, 0x82, 0x01, 0x2c]);
        assert_eq!(long.len(), 304);
    }

    /// The key satisfies what Go's `dsa` package checks of a key: sizes, q | p − 1, g of order q, y = g^x.
    #[test]
    fn generated_keys_have_go_shaped_parameters() {
        let key = DsaKey::generate(&mut rand::rng());
        let one = BigUint::from(1u8);
        assert_eq!(key.p.bits(), L_BITS);
        assert_eq!(key.q.bits(), N_BITS);
        assert_eq!((&key.p - &one) % &key.q, BigUint::from(0u8));
        assert!(probably_prime(&key.p, 20) && probably_prime(&key.q, 20));
        assert!(key.g > one && key.g < key.p);
        assert_eq!(key.g.modpow(&key.q, &key.p), one);
        assert!(key.x > BigUint::from(0u8) && key.x < key.q);
        assert_eq!(key.g.modpow(&key.x, &key.p), key.y);
        let der = key.to_der();
        assert_eq!(&der[..2], &[0x30, 0x82]);
        assert_eq!(&der[4..7], &[0x02, 0x01, 0x00], "version 0 first");
    }
}
