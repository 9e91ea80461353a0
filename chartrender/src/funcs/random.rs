//! Sprig's random functions from the OS's cryptographic generator: `randAlpha randNumeric randAlphaNum randAscii
//! randInt shuffle uuidv4`.

use minijinja::Error;
use minijinja::value::Value;
use rand::Rng as _;
use rand::seq::SliceRandom as _;

use super::value::to_i64;
use super::{arg_str, fail, want};

/// The longest random string made at once.
const MAX_RANDOM_LEN: i64 = 1 << 20;

fn random_string(name: &str, args: &[Value], alphabet: &[u8]) -> Result<Value, Error> {
    want(name, args, 1)?;
    let count = to_i64(&args[0]);
    if count > MAX_RANDOM_LEN {
        return Err(fail(format!(
            "error calling {name}: more than {MAX_RANDOM_LEN} characters requested"
        )));
    }
    // Sprig drops goutils' error for a negative count and returns "".
    let count = usize::try_from(count).unwrap_or(0);
    let mut rng = rand::rng();
    Ok(Value::from(
        (0..count)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())] as char)
            .collect::<String>(),
    ))
}

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &[u8] = b"0123456789";
const ALPHANUMERIC: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/// `randAlpha n`
pub(crate) fn rand_alpha(args: &[Value]) -> Result<Value, Error> {
    random_string("randAlpha", args, LETTERS)
}

/// `randNumeric n`
pub(crate) fn rand_numeric(args: &[Value]) -> Result<Value, Error> {
    random_string("randNumeric", args, DIGITS)
}

/// `randAlphaNum n`
pub(crate) fn rand_alpha_num(args: &[Value]) -> Result<Value, Error> {
    random_string("randAlphaNum", args, ALPHANUMERIC)
}

/// `randAscii n`: printable ASCII from space to `~`.
pub(crate) fn rand_ascii(args: &[Value]) -> Result<Value, Error> {
    let printable: Vec<u8> = (32u8..127).collect();
    random_string("randAscii", args, &printable)
}

/// `randInt min max`: min ≤ n < max; Go panics (an error here) when max ≤ min.
pub(crate) fn rand_int(args: &[Value]) -> Result<Value, Error> {
    want("randInt", args, 2)?;
    let (min, max) = (to_i64(&args[0]), to_i64(&args[1]));
    if max <= min {
        return Err(fail("error calling randInt: invalid argument to Intn"));
    }
    Ok(Value::from(rand::rng().random_range(min..max)))
}

/// `shuffle s`: the characters of s in random order.
pub(crate) fn shuffle(args: &[Value]) -> Result<Value, Error> {
    want("shuffle", args, 1)?;
    let mut chars: Vec<char> = arg_str(args, 0).chars().collect();
    chars.shuffle(&mut rand::rng());
    Ok(Value::from(chars.into_iter().collect::<String>()))
}

/// `uuidv4`: a random (version 4, RFC 4122 variant) UUID.
pub(crate) fn uuidv4(args: &[Value]) -> Result<Value, Error> {
    want("uuidv4", args, 0)?;
    let mut bytes: [u8; 16] = rand::rng().random();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex = hex::encode(bytes);
    Ok(Value::from(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_strings_have_the_length_and_alphabet_asked_for() {
        let s = rand_alpha_num(&[Value::from(40)]).unwrap().to_string();
        assert_eq!(s.len(), 40);
        assert!(s.bytes().all(|b| b.is_ascii_alphanumeric()));
        assert!(
            rand_numeric(&[Value::from(9)])
                .unwrap()
                .to_string()
                .bytes()
                .all(|b| b.is_ascii_digit())
        );
        assert_eq!(rand_alpha(&[Value::from(-1)]).unwrap().to_string(), "");
        assert!(rand_int(&[Value::from(3), Value::from(3)]).is_err());
        let n = rand_int(&[Value::from(3), Value::from(4)])
            .unwrap()
            .as_i64();
        assert_eq!(n, Some(3));
        let mut shuffled: Vec<char> = shuffle(&[Value::from("abcdef")])
            .unwrap()
            .to_string()
            .chars()
            .collect();
        shuffled.sort_unstable();
        assert_eq!(shuffled.into_iter().collect::<String>(), "abcdef");
        let id = uuidv4(&[]).unwrap().to_string();
        assert_eq!(&id[14..15], "4");
        assert!("89ab".contains(&id[19..20]));
    }
}
