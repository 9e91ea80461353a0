//! Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`) for the kinds clients send
//! that way, converted to and from the JSON objects the rest of the server works with.
//!
//! A body is the magic prefix `k8s\0` followed by a `runtime.Unknown` message: `typeMeta` (field 1:
//! `apiVersion` = 1, `kind` = 2), `raw` (field 2: the object's own message), `contentEncoding` (3)
//! and `contentType` (4). The object's message is read field by field against [`schema`]; fields
//! the schema does not know are skipped, as protobuf readers do.
//!
//! Decoding yields what Go's JSON encoding of the decoded struct would: empty strings, `false` and
//! zero numbers are left out (they are indistinguishable from unset on the wire), embedded
//! messages are kept even when empty.

mod kinds;
mod schema;
pub mod wire;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use self::schema::{Field, FieldType, Message};
use self::wire::{Reader, WireValue, Writer};

/// The protobuf media type.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";
/// Prefix of every protobuf-encoded object.
const MAGIC: &[u8] = b"k8s\0";

/// Why a protobuf body could not be read or an object not be encoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProtobufError {
    /// The body does not start with `k8s\0`.
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    Magic,
    /// A length or varint runs past the end of the data.
    #[error("truncated protobuf data at byte {at}")]
    Truncated {
        /// Offset where the data ended.
        at: usize,
    },
    /// A varint longer than ten bytes.
    #[error("protobuf varint too long at byte {at}")]
    VarintTooLong {
        /// Offset after the tenth byte.
        at: usize,
    },
    /// A wire type other than varint, fixed32/64 or length-delimited (groups are not used by Kubernetes).
    #[error("unsupported protobuf wire type {wire_type}")]
    WireType {
        /// The wire type bits.
        wire_type: u64,
    },
    /// A tag with field number 0 or beyond 2^32.
    #[error("invalid protobuf field number in tag {tag}")]
    FieldNumber {
        /// The tag as read.
        tag: u64,
    },
    /// A known field arrived with a wire type that does not fit its schema type.
    #[error("field {field} of {message} has the wrong wire type")]
    FieldWireType {
        /// Message name.
        message: &'static str,
        /// Field JSON name.
        field: &'static str,
    },
    /// A string field is not UTF-8.
    #[error("field {field} of {message} is not valid UTF-8")]
    Utf8 {
        /// Message name.
        message: &'static str,
        /// Field JSON name.
        field: &'static str,
        /// The decoding failure.
        #[source]
        source: std::str::Utf8Error,
    },
    /// A time field is out of range.
    #[error("field {field} of {message} is not a valid time")]
    Time {
        /// Message name.
        message: &'static str,
        /// Field JSON name.
        field: &'static str,
    },
    /// The envelope declares a content encoding (such as gzip) the server does not apply.
    #[error("unsupported protobuf content encoding {encoding:?}")]
    ContentEncoding {
        /// The declared encoding.
        encoding: String,
    },
    /// No protobuf schema for the object's type.
    #[error("no protobuf encoding is served for {api_version}, Kind={kind}")]
    UnknownKind {
        /// apiVersion of the object.
        api_version: String,
        /// kind of the object.
        kind: String,
    },
    /// A JSON value to encode does not have the type its schema field needs.
    #[error("field {field} of {message} cannot be encoded from {value}")]
    JsonType {
        /// Message name.
        message: &'static str,
        /// Field JSON name.
        field: &'static str,
        /// The offending value.
        value: Value,
    },
}

/// Whether `content_type` is the protobuf media type (parameters aside).
pub fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|m| m.trim().eq_ignore_ascii_case(MEDIA_TYPE))
}

/// Whether a response must be protobuf: the Accept header lists protobuf and nothing JSON can answer.
pub fn only_protobuf_accepted(accept: &str) -> bool {
    let media: Vec<String> = accept
        .split(',')
        .filter_map(|m| m.split(';').next())
        .map(|m| m.trim().to_ascii_lowercase())
        .collect();
    media.iter().any(|m| m == MEDIA_TYPE)
        && !media
            .iter()
            .any(|m| m == "application/json" || m == "application/*" || m == "*/*")
}

/// Decodes a protobuf body into the JSON object it stands for (with `apiVersion` and `kind`).
///
/// # Errors
/// A malformed envelope or message, an unsupported content encoding, or a kind without a schema.
pub fn decode_object(bytes: &[u8]) -> Result<Value, ProtobufError> {
    let envelope = bytes.strip_prefix(MAGIC).ok_or(ProtobufError::Magic)?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    let mut reader = Reader::new(envelope);
    while let Some((number, value)) = reader.next_field()? {
        match (number, value) {
            (1, WireValue::Bytes(type_meta)) => {
                let mut fields = Reader::new(type_meta);
                while let Some((number, value)) = fields.next_field()? {
                    match (number, value) {
                        (1, WireValue::Bytes(text)) => {
                            api_version = utf8(text, "TypeMeta", "apiVersion")?
                        }
                        (2, WireValue::Bytes(text)) => kind = utf8(text, "TypeMeta", "kind")?,
                        _ => {}
                    }
                }
            }
            (2, WireValue::Bytes(bytes)) => raw = bytes,
            (3, WireValue::Bytes(encoding)) if !encoding.is_empty() => {
                return Err(ProtobufError::ContentEncoding {
                    encoding: String::from_utf8_lossy(encoding).into_owned(),
                });
            }
            _ => {}
        }
    }
    let Some(message) = schema::message_for(&api_version, &kind) else {
        return Err(ProtobufError::UnknownKind { api_version, kind });
    };
    let mut object = Map::new();
    object.insert("kind".into(), Value::String(kind));
    object.insert("apiVersion".into(), Value::String(api_version));
    object.extend(decode_message(raw, message)?);
    Ok(Value::Object(object))
}

/// Encodes a JSON object (with `apiVersion` and `kind`) as a protobuf body; only the kinds whose
/// schema is complete (the reviews) are encoded.
///
/// # Errors
/// A kind without a complete schema, or a field whose JSON value does not fit its protobuf type.
pub fn encode_object(object: &Value) -> Result<Vec<u8>, ProtobufError> {
    encode_with(object, schema::response_message_for)
}

/// Encodes a request body as kubectl would, for any kind the server reads from protobuf.
#[cfg(test)]
fn encode_request(object: &Value) -> Result<Vec<u8>, ProtobufError> {
    encode_with(object, schema::message_for)
}

fn encode_with(
    object: &Value,
    message_for: fn(&str, &str) -> Option<&'static Message>,
) -> Result<Vec<u8>, ProtobufError> {
    let text = |field: &str| {
        object
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let Some(message) = message_for(api_version, kind) else {
        return Err(ProtobufError::UnknownKind {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
        });
    };
    let empty = Map::new();
    let raw = encode_message(object.as_object().unwrap_or(&empty), message)?;
    let mut type_meta = Writer::default();
    type_meta.bytes_field(1, api_version.as_bytes());
    type_meta.bytes_field(2, kind.as_bytes());
    let mut envelope = Writer::default();
    envelope.bytes_field(1, &type_meta.into_bytes());
    envelope.bytes_field(2, &raw);
    envelope.bytes_field(3, b"");
    envelope.bytes_field(4, b"");
    let mut out = MAGIC.to_vec();
    out.extend(envelope.into_bytes());
    Ok(out)
}

fn decode_message(
    bytes: &[u8],
    message: &'static Message,
) -> Result<Map<String, Value>, ProtobufError> {
    let mut out = Map::new();
    let mut reader = Reader::new(bytes);
    while let Some((number, value)) = reader.next_field()? {
        let Some(field) = message.field(number) else {
            continue;
        };
        let wrong_type = || ProtobufError::FieldWireType {
            message: message.name,
            field: field.name,
        };
        let decoded = match (field.kind, value) {
            (FieldType::String, WireValue::Bytes(text)) => {
                Value::String(utf8(text, message.name, field.name)?)
            }
            (FieldType::Bool, WireValue::Varint(v)) => Value::Bool(v != 0),
            (FieldType::Int, WireValue::Varint(v)) => Value::from(v as i64),
            (FieldType::Time, WireValue::Bytes(time)) => decode_time(time, message, field.name)?,
            (FieldType::Message(inner), WireValue::Bytes(bytes)) => {
                Value::Object(decode_message(bytes, inner)?)
            }
            (
                FieldType::StringMap
                | FieldType::StringListMap
                | FieldType::BytesMap
                | FieldType::QuantityMap,
                WireValue::Bytes(entry),
            ) => {
                let (key, value) = decode_entry(entry, message, field.name)?;
                let value =
                    decode_map_value(field.kind, value.unwrap_or_default(), message, field)?;
                let map = out
                    .entry(field.name)
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(map) = map {
                    map.insert(key, value);
                }
                continue;
            }
            (FieldType::IntOrString, WireValue::Bytes(bytes)) => {
                decode_int_or_string(bytes, message, field.name)?
            }
            _ => return Err(wrong_type()),
        };
        if field.repeated {
            if let Value::Array(items) = out
                .entry(field.name)
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                items.push(decoded);
            }
        } else if field.keep_zero || !is_zero(&decoded) {
            out.insert(field.name.to_string(), decoded);
        } else {
            out.remove(field.name);
        }
    }
    Ok(out)
}

/// The JSON value of a map entry's value bytes.
fn decode_map_value(
    kind: FieldType,
    bytes: &[u8],
    message: &'static Message,
    field: &'static Field,
) -> Result<Value, ProtobufError> {
    Ok(match kind {
        FieldType::BytesMap => Value::String(STANDARD.encode(bytes)),
        FieldType::StringListMap => {
            let mut items = Vec::new();
            let mut reader = Reader::new(bytes);
            while let Some((number, item)) = reader.next_field()? {
                if let (1, WireValue::Bytes(text)) = (number, item) {
                    items.push(Value::String(utf8(text, message.name, field.name)?));
                }
            }
            Value::Array(items)
        }
        FieldType::QuantityMap => {
            // `resource.Quantity` is `optional string string = 1`.
            let mut quantity = String::new();
            let mut reader = Reader::new(bytes);
            while let Some((number, item)) = reader.next_field()? {
                if let (1, WireValue::Bytes(text)) = (number, item) {
                    quantity = utf8(text, message.name, field.name)?;
                }
            }
            Value::String(quantity)
        }
        _ => Value::String(utf8(bytes, message.name, field.name)?),
    })
}

/// `intstr.IntOrString`: `type` 1 is the string `strVal`, otherwise the number `intVal`.
fn decode_int_or_string(
    bytes: &[u8],
    message: &'static Message,
    field: &'static str,
) -> Result<Value, ProtobufError> {
    let (mut is_string, mut number, mut text) = (false, 0i64, String::new());
    let mut reader = Reader::new(bytes);
    while let Some((tag, value)) = reader.next_field()? {
        match (tag, value) {
            (1, WireValue::Varint(v)) => is_string = v == 1,
            (2, WireValue::Varint(v)) => number = i64::from(v as i32),
            (3, WireValue::Bytes(bytes)) => text = utf8(bytes, message.name, field)?,
            _ => {}
        }
    }
    Ok(if is_string {
        Value::String(text)
    } else {
        Value::from(number)
    })
}

/// Zero scalars are what Go's omitempty leaves out; messages stay even when empty.
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Bool(flag) => !flag,
        Value::Number(number) => number.as_i64() == Some(0),
        Value::Array(_) | Value::Object(_) => false,
    }
}

/// A map entry: key (field 1) and value bytes (field 2).
fn decode_entry<'a>(
    entry: &'a [u8],
    message: &'static Message,
    field: &'static str,
) -> Result<(String, Option<&'a [u8]>), ProtobufError> {
    let mut key = String::new();
    let mut value = None;
    let mut reader = Reader::new(entry);
    while let Some((number, item)) = reader.next_field()? {
        match (number, item) {
            (1, WireValue::Bytes(text)) => key = utf8(text, message.name, field)?,
            (2, WireValue::Bytes(bytes)) => value = Some(bytes),
            _ => {}
        }
    }
    Ok((key, value))
}

/// `meta.v1.Time` → RFC 3339 in seconds, as metav1.Time marshals to JSON; the zero time is null.
fn decode_time(
    bytes: &[u8],
    message: &'static Message,
    field: &'static str,
) -> Result<Value, ProtobufError> {
    let (mut seconds, mut nanos) = (0i64, 0i32);
    let mut reader = Reader::new(bytes);
    while let Some((number, value)) = reader.next_field()? {
        match (number, value) {
            (1, WireValue::Varint(v)) => seconds = v as i64,
            (2, WireValue::Varint(v)) => nanos = v as i32,
            _ => {}
        }
    }
    if seconds == 0 && nanos == 0 {
        return Ok(Value::Null);
    }
    let time = jiff::Timestamp::new(seconds, nanos).map_err(|_| ProtobufError::Time {
        message: message.name,
        field,
    })?;
    Ok(Value::String(
        time.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    ))
}

fn encode_message(
    object: &Map<String, Value>,
    message: &'static Message,
) -> Result<Vec<u8>, ProtobufError> {
    let mut writer = Writer::default();
    for field in message.fields {
        let Some(value) = object.get(field.name).filter(|v| !v.is_null()) else {
            continue;
        };
        let json_type = || ProtobufError::JsonType {
            message: message.name,
            field: field.name,
            value: value.clone(),
        };
        let items: Vec<&Value> = match (field.repeated, value) {
            (true, Value::Array(items)) => items.iter().collect(),
            (true, _) => return Err(json_type()),
            (false, single) => vec![single],
        };
        for item in items {
            match field.kind {
                FieldType::String => {
                    writer.bytes_field(
                        field.number,
                        item.as_str().ok_or_else(json_type)?.as_bytes(),
                    );
                }
                FieldType::Bool => {
                    writer.varint_field(
                        field.number,
                        u64::from(item.as_bool().ok_or_else(json_type)?),
                    );
                }
                FieldType::Int => {
                    // Negative numbers are ten-byte two's-complement varints on the wire.
                    writer.varint_field(field.number, item.as_i64().ok_or_else(json_type)? as u64);
                }
                FieldType::Time => {
                    let time: jiff::Timestamp = item
                        .as_str()
                        .and_then(|t| t.parse().ok())
                        .ok_or_else(json_type)?;
                    let mut inner = Writer::default();
                    inner.varint_field(1, time.as_second() as u64);
                    inner.varint_field(2, u64::from(time.subsec_nanosecond().unsigned_abs()));
                    writer.bytes_field(field.number, &inner.into_bytes());
                }
                FieldType::Message(inner) => {
                    let object = item.as_object().ok_or_else(json_type)?;
                    writer.bytes_field(field.number, &encode_message(object, inner)?);
                }
                FieldType::IntOrString => {
                    let mut inner = Writer::default();
                    match item {
                        Value::String(text) => {
                            inner.varint_field(1, 1);
                            inner.bytes_field(3, text.as_bytes());
                        }
                        number => {
                            let number = number.as_i64().ok_or_else(json_type)?;
                            inner.varint_field(1, 0);
                            inner.varint_field(2, number as u64);
                        }
                    }
                    writer.bytes_field(field.number, &inner.into_bytes());
                }
                FieldType::StringMap
                | FieldType::StringListMap
                | FieldType::BytesMap
                | FieldType::QuantityMap => {
                    for (key, value) in item.as_object().ok_or_else(json_type)? {
                        let mut entry = Writer::default();
                        entry.bytes_field(1, key.as_bytes());
                        let value = encode_map_value(field.kind, value).ok_or_else(json_type)?;
                        entry.bytes_field(2, &value);
                        writer.bytes_field(field.number, &entry.into_bytes());
                    }
                }
            }
        }
    }
    Ok(writer.into_bytes())
}

/// The value bytes of a map entry; `None` when the JSON value does not fit the map's type.
fn encode_map_value(kind: FieldType, value: &Value) -> Option<Vec<u8>> {
    match kind {
        FieldType::BytesMap => STANDARD.decode(value.as_str()?).ok(),
        FieldType::StringListMap => {
            let mut items = Writer::default();
            for item in value.as_array()? {
                items.bytes_field(1, item.as_str()?.as_bytes());
            }
            Some(items.into_bytes())
        }
        FieldType::QuantityMap => {
            let text = match value {
                Value::Number(number) => number.to_string(),
                other => other.as_str()?.to_string(),
            };
            let mut quantity = Writer::default();
            quantity.bytes_field(1, text.as_bytes());
            Some(quantity.into_bytes())
        }
        _ => Some(value.as_str()?.as_bytes().to_vec()),
    }
}

fn utf8(bytes: &[u8], message: &'static str, field: &'static str) -> Result<String, ProtobufError> {
    std::str::from_utf8(bytes)
        .map(str::to_string)
        .map_err(|source| ProtobufError::Utf8 {
            message,
            field,
            source,
        })
}

#[cfg(test)]
mod create_tests;
#[cfg(test)]
mod tests;
