//! The JSON value the parts are read from, borrowed from the datagram, and
//! the repair of Python's non-finite numbers.

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value as the parts are read from it: strings without escapes
/// (the base64 image) borrowed from the datagram, numbers as `f64` (as
/// `serde_json::Value::as_f64` gives them), no key copied. The same JSON is
/// accepted and refused as by `serde_json::Value`.
pub(super) enum Json<'a> {
    Null,
    Bool(bool),
    Number(f64),
    String(Cow<'a, str>),
    /// No part is an array: its elements are parsed (and checked) and dropped.
    Array,
    Object(Object<'a>),
}

/// An object's members in their order; of a repeated key the last counts.
pub(super) struct Object<'a>(Vec<(Cow<'a, str>, Json<'a>)>);

impl<'a> Object<'a> {
    pub(super) fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.0.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(super) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

impl Json<'_> {
    pub(super) fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(x) => Some(*x),
            _ => None,
        }
    }

    pub(super) fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub(super) fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }
}

/// An object key, borrowed when it has no escape.
struct Key<'a>(Cow<'a, str>);

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(n as f64))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(n as f64))
    }
    fn visit_f64<E>(self, x: f64) -> Result<Json<'de>, E> {
        Ok(Json::Number(x))
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(s)))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        while seq.next_element::<Json<'de>>()?.is_some() {}
        Ok(Json::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(0).min(16));
        while let Some((Key(k), v)) = map.next_entry::<Key<'de>, Json<'de>>()? {
            members.push((k, v));
        }
        Ok(Json::Object(Object(members)))
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object key")
    }
    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(s)))
    }
    fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s.to_owned())))
    }
    fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(s)))
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

/// Python's `json.dumps` writes `NaN`, `Infinity` and `-Infinity`, which
/// are not JSON. Rewritten as `null` (outside strings), the part holding
/// one is then dropped alone. `None` when there is none to rewrite.
pub(super) fn non_finite_as_null(input: &[u8]) -> Option<Vec<u8>> {
    const TOKENS: [&[u8]; 3] = [b"-Infinity", b"Infinity", b"NaN"];
    let mut out = Vec::with_capacity(input.len());
    let (mut in_string, mut escaped, mut changed) = (false, false, false);
    let mut i = 0;
    while i < input.len() {
        let b = input[i];
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if let Some(t) = TOKENS.iter().find(|t| input[i..].starts_with(t)) {
            out.extend_from_slice(b"null");
            i += t.len();
            changed = true;
            continue;
        }
        out.push(b);
        i += 1;
    }
    changed.then_some(out)
}
