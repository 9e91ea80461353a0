//! The protobuf wire format: varints, tags and length-delimited fields, read and written.

use super::ProtobufError;

/// How a field's value is laid out on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireType {
    /// Varint (int32, int64, bool, enums).
    Varint,
    /// Eight bytes, little endian.
    Fixed64,
    /// Length prefix, then that many bytes (strings, bytes, messages, packed repeated).
    LengthDelimited,
    /// Four bytes, little endian.
    Fixed32,
}

impl WireType {
    fn from_tag(tag: u64) -> Result<Self, ProtobufError> {
        match tag & 7 {
            0 => Ok(WireType::Varint),
            1 => Ok(WireType::Fixed64),
            2 => Ok(WireType::LengthDelimited),
            5 => Ok(WireType::Fixed32),
            other => Err(ProtobufError::WireType { wire_type: other }),
        }
    }

    fn bits(self) -> u64 {
        match self {
            WireType::Varint => 0,
            WireType::Fixed64 => 1,
            WireType::LengthDelimited => 2,
            WireType::Fixed32 => 5,
        }
    }
}

/// One field as read from the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireValue<'a> {
    /// A varint.
    Varint(u64),
    /// A fixed 64-bit value.
    Fixed64(u64),
    /// A fixed 32-bit value.
    Fixed32(u32),
    /// Length-delimited bytes.
    Bytes(&'a [u8]),
}

/// Reads fields one after another from a message's bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    /// A reader over one message.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, position: 0 }
    }

    /// The next field number and value, or `None` at the end of the message.
    pub fn next_field(&mut self) -> Result<Option<(u32, WireValue<'a>)>, ProtobufError> {
        if self.position >= self.bytes.len() {
            return Ok(None);
        }
        let tag = self.varint()?;
        let number = u32::try_from(tag >> 3)
            .ok()
            .filter(|n| *n > 0)
            .ok_or(ProtobufError::FieldNumber { tag })?;
        let value = match WireType::from_tag(tag)? {
            WireType::Varint => WireValue::Varint(self.varint()?),
            WireType::Fixed64 => {
                let bytes = self.take(8)?;
                let mut array = [0u8; 8];
                array.copy_from_slice(bytes);
                WireValue::Fixed64(u64::from_le_bytes(array))
            }
            WireType::Fixed32 => {
                let bytes = self.take(4)?;
                let mut array = [0u8; 4];
                array.copy_from_slice(bytes);
                WireValue::Fixed32(u32::from_le_bytes(array))
            }
            WireType::LengthDelimited => {
                let length = usize::try_from(self.varint()?)
                    .map_err(|_| ProtobufError::Truncated { at: self.position })?;
                WireValue::Bytes(self.take(length)?)
            }
        };
        Ok(Some((number, value)))
    }

    fn varint(&mut self) -> Result<u64, ProtobufError> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.bytes.get(self.position) else {
                return Err(ProtobufError::Truncated { at: self.position });
            };
            self.position += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(ProtobufError::VarintTooLong { at: self.position })
    }

    fn take(&mut self, length: usize) -> Result<&'a [u8], ProtobufError> {
        let end = self
            .position
            .checked_add(length)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(ProtobufError::Truncated { at: self.position })?;
        let bytes = &self.bytes[self.position..end];
        self.position = end;
        Ok(bytes)
    }
}

/// Appends fields to a message's bytes.
#[derive(Default)]
pub struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    /// The bytes written so far.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    /// A varint field.
    pub fn varint_field(&mut self, number: u32, value: u64) {
        self.tag(number, WireType::Varint);
        self.varint(value);
    }

    /// A length-delimited field (string, bytes or embedded message).
    pub fn bytes_field(&mut self, number: u32, value: &[u8]) {
        self.tag(number, WireType::LengthDelimited);
        self.varint(value.len() as u64);
        self.bytes.extend_from_slice(value);
    }

    /// A 64-bit fixed-width field (`double`).
    pub fn double_field(&mut self, number: u32, value: f64) {
        self.varint((u64::from(number) << 3) | 1);
        self.bytes.extend_from_slice(&value.to_bits().to_le_bytes());
    }

    fn tag(&mut self, number: u32, wire_type: WireType) {
        self.varint((u64::from(number) << 3) | wire_type.bits());
    }

    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.bytes.push((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        self.bytes.push(value as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_fields_read_back_in_order() {
        let mut writer = Writer::default();
        writer.varint_field(1, 300);
        writer.bytes_field(2, b"get");
        writer.varint_field(15, u64::MAX);
        let bytes = writer.into_bytes();
        assert_eq!(&bytes[..3], &[0x08, 0xac, 0x02]);
        let mut reader = Reader::new(&bytes);
        assert_eq!(
            reader.next_field().expect("field 1"),
            Some((1, WireValue::Varint(300)))
        );
        assert_eq!(
            reader.next_field().expect("field 2"),
            Some((2, WireValue::Bytes(b"get".as_slice())))
        );
        assert_eq!(
            reader.next_field().expect("field 15"),
            Some((15, WireValue::Varint(u64::MAX)))
        );
        assert_eq!(reader.next_field().expect("end"), None);
    }

    #[test]
    fn reader_rejects_truncated_and_malformed_input() {
        // Length 5 but only 2 bytes follow.
        assert!(matches!(
            Reader::new(&[0x0a, 0x05, b'a', b'b']).next_field(),
            Err(ProtobufError::Truncated { .. })
        ));
        // Wire type 3 (start group) is not supported.
        assert!(matches!(
            Reader::new(&[0x0b]).next_field(),
            Err(ProtobufError::WireType { wire_type: 3 })
        ));
        // Field number 0 is invalid.
        assert!(matches!(
            Reader::new(&[0x00, 0x01]).next_field(),
            Err(ProtobufError::FieldNumber { .. })
        ));
        // A varint longer than ten bytes.
        assert!(matches!(
            Reader::new(&[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
            ])
            .next_field(),
            Err(ProtobufError::VarintTooLong { .. })
        ));
    }

    #[test]
    fn fixed_width_fields_are_little_endian() {
        let bytes = [0x09, 1, 0, 0, 0, 0, 0, 0, 0, 0x15, 2, 0, 0, 0];
        let mut reader = Reader::new(&bytes);
        assert_eq!(
            reader.next_field().expect("fixed64"),
            Some((1, WireValue::Fixed64(1)))
        );
        assert_eq!(
            reader.next_field().expect("fixed32"),
            Some((2, WireValue::Fixed32(2)))
        );
    }
}
