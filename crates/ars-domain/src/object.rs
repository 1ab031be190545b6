//! Nested structs read from JSON objects only.
//!
//! serde's derived `Deserialize` for a struct also accepts a sequence (the fields by position),
//! so `"limits": []` would read as empty limits, while the API's schema says an object. Fields
//! of struct type that clients send use these helpers (`#[serde(deserialize_with = …)]`), so
//! the types and the schema agree.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};

/// A struct that must come from a map (a JSON object).
pub fn object<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    deserializer.deserialize_map(ObjectVisitor(PhantomData))
}

/// An optional struct: `null` is `None`, anything else must be an object.
pub fn optional_object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    deserializer.deserialize_option(OptionalVisitor(PhantomData))
}

struct ObjectVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

struct OptionalVisitor<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for OptionalVisitor<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object or null")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        object(deserializer).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    struct Inner {
        #[serde(default)]
        a: Option<u32>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    struct Outer {
        #[serde(default, deserialize_with = "super::optional_object")]
        maybe: Option<Inner>,
        #[serde(default, deserialize_with = "super::object")]
        always: Inner,
    }

    #[test]
    fn structs_come_from_objects_and_never_from_arrays() {
        let read = |json: &str| serde_json::from_str::<Outer>(json);
        let ok = read(r#"{"maybe": {"a": 1}, "always": {"a": 2}}"#).unwrap();
        assert_eq!(ok.maybe, Some(Inner { a: Some(1) }));
        assert_eq!(read(r#"{"maybe": null}"#).unwrap().maybe, None);
        assert_eq!(read("{}").unwrap().maybe, None);
        assert!(read(r#"{"maybe": []}"#).is_err());
        assert!(read(r#"{"maybe": [null]}"#).is_err());
        assert!(read(r#"{"maybe": 3}"#).is_err());
        assert_eq!(read(r#"{"always": {"a": 2}}"#).unwrap().always.a, Some(2));
        assert!(read(r#"{"always": []}"#).is_err());
        assert!(read(r#"{"always": null}"#).is_err());
        // Plain derived structs read arrays; these do not.
        assert!(serde_json::from_str::<Inner>("[7]").is_ok());
    }
}
