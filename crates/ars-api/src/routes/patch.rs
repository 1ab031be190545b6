//! One PATCH style for every resource.
//!
//! A PATCH body is a typed struct with `#[serde(deny_unknown_fields)]` at every level, so a key
//! the resource does not have is refused (a 422 naming it) even when its value is `null`, and a
//! value of the wrong type is refused by the field's own type — before anything is read from
//! the store. Each field is a [`Patch`]: absent, `null` or a value. The body is then applied
//! over what is stored ([`PatchOver::over`]) and gives exactly the write a `PUT` would send,
//! which takes that resource's one validation path; so a PATCH can never be checked by rules
//! of its own.
//!
//! What `null` means is the resource's to say, and its `over` says it with the methods below:
//! agents and skills are RFC 7396 merge patches (`null` removes a member, back to its default;
//! nested objects merge member by member, through [`MergeInto`]), model providers refuse
//! removing what they cannot lack, and the older bodies of MCP servers, knowledge bases and
//! users keep the stored value.

use serde::{Deserialize, Deserializer};

use crate::ApiError;

/// One field of a PATCH body.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) enum Patch<T> {
    /// Absent: the stored value stays.
    #[default]
    Keep,
    /// `null`.
    Remove,
    /// A value.
    Set(T),
}

/// Read from `null` or a value; an absent field is [`Patch::Keep`] through `#[serde(default)]`.
impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(deserializer).map(|value| value.map_or(Self::Remove, Self::Set))
    }
}

impl<T> Patch<T> {
    /// `null` removes the value (an optional field).
    pub(crate) fn optional(self, stored: Option<T>) -> Option<T> {
        match self {
            Self::Keep => stored,
            Self::Remove => None,
            Self::Set(value) => Some(value),
        }
    }

    /// `null` puts the field back to its default.
    pub(crate) fn or_default(self, stored: T) -> T
    where
        T: Default,
    {
        match self {
            Self::Keep => stored,
            Self::Remove => T::default(),
            Self::Set(value) => value,
        }
    }

    /// `null` keeps the stored value, as absence does.
    pub(crate) fn or_keep(self, stored: T) -> T {
        self.set().unwrap_or(stored)
    }

    /// The value sent, if any (`null` and absence alike are `None`).
    pub(crate) fn set(self) -> Option<T> {
        match self {
            Self::Set(value) => Some(value),
            Self::Keep | Self::Remove => None,
        }
    }

    /// A member that is an object of its own: a value merges member by member over the stored
    /// object (or over nothing), `null` removes it.
    pub(crate) fn merge<S>(self, stored: Option<S>, at: &str) -> Result<Option<S>, ApiError>
    where
        T: MergeInto<S>,
    {
        match self {
            Self::Keep => Ok(stored),
            Self::Remove => Ok(None),
            Self::Set(patch) => patch.merge_into(stored, at).map(Some),
        }
    }

    /// As [`Patch::merge`], for an object that is never absent: `null` puts it back to its
    /// default.
    pub(crate) fn merge_or_default<S: Default>(self, stored: S, at: &str) -> Result<S, ApiError>
    where
        T: MergeInto<S>,
    {
        Ok(self.merge(Some(stored), at)?.unwrap_or_default())
    }
}

/// An object in a merge patch, applied over the stored object `S` (absent: over nothing).
pub(crate) trait MergeInto<S> {
    /// The merged object; `at` is its dotted path, for the member it misses.
    fn merge_into(self, stored: Option<S>, at: &str) -> Result<S, ApiError>;
}

/// A PATCH body applied over the stored resource: the write a `PUT` would send.
pub(crate) trait PatchOver<Stored> {
    type Write;

    fn over(self, stored: &Stored) -> Result<Self::Write, ApiError>;
}

/// An object member: `null` or an object, never an array (serde would read a struct from
/// one), as the schema says.
pub(crate) fn object<'de, D, T>(deserializer: D) -> Result<Patch<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    ars_domain::object::optional_object(deserializer)
        .map(|value| value.map_or(Patch::Remove, Patch::Set))
}

/// A member a merge left without a value it must have, named as serde names a missing field
/// (the message a `PUT` without it answers).
pub(crate) fn missing(at: &str, member: &str) -> ApiError {
    let field = if at.is_empty() {
        member.to_string()
    } else {
        format!("{at}.{member}")
    };
    ApiError::unprocessable(field, format!("missing field `{member}`"))
}

/// RFC 7396 over free JSON (a member whose value has no type of its own, such as a scripted
/// model's script): objects merge key by key, `null` removes a key, anything else replaces.
pub(crate) fn merge_json(target: &mut serde_json::Value, patch: serde_json::Value) {
    use serde_json::Value;
    match patch {
        Value::Object(fields) => {
            if !target.is_object() {
                *target = Value::Object(serde_json::Map::new());
            }
            if let Value::Object(map) = target {
                for (key, value) in fields {
                    if value.is_null() {
                        map.remove(&key);
                    } else {
                        merge_json(map.entry(key).or_insert(Value::Null), value);
                    }
                }
            }
        }
        other => *target = other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        #[serde(default)]
        a: Patch<u32>,
        #[serde(default)]
        b: Patch<u32>,
        #[serde(default)]
        c: Patch<u32>,
    }

    #[test]
    fn a_field_is_absent_null_or_a_value() {
        let body: Body = serde_json::from_value(json!({"b": null, "c": 3})).unwrap();
        assert_eq!(
            (body.a, body.b, body.c),
            (Patch::Keep, Patch::Remove, Patch::Set(3))
        );
        assert!(serde_json::from_value::<Body>(json!({"d": null})).is_err());
    }

    #[test]
    fn each_way_of_reading_null() {
        assert_eq!(Patch::Remove.optional(Some(1)), None);
        assert_eq!(Patch::Keep.optional(Some(1)), Some(1));
        assert_eq!(Patch::Remove.or_default(5), 0);
        assert_eq!(Patch::Remove.or_keep(5), 5);
        assert_eq!(Patch::Set(7).or_keep(5), 7);
    }

    #[test]
    fn free_json_merges_by_rfc_7396() {
        let mut doc = json!({"a": 1, "b": {"c": 2, "d": 3}});
        merge_json(&mut doc, json!({"a": null, "b": {"c": 5}, "e": [1]}));
        assert_eq!(doc, json!({"b": {"c": 5, "d": 3}, "e": [1]}));
    }
}
