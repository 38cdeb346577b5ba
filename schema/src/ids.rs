//! Ids as types. A value of [`MissionId`], [`RunId`] or [`AttentionId`] has passed the id
//! rule (contract §2): 1–128 bytes of `A–Z a–z 0–9 _ . : -`, and neither `.` nor `..`.
//! That rule makes every id exactly one path component, so [`MissionId::path_segment`] and
//! its kin need no escaping: ids name transcript files and a run's scratch folder.
//!
//! The wire's params keep ids as text, because the contract checks them at a given step of
//! each method (`mission.start` answers `mission_not_found` before it looks at the run id's
//! syntax). A handler turns the text into its typed id at that step, before anything is
//! written or spawned, and passes the typed id on; nothing below the handler takes an id as
//! a bare string where a path or a claim is built from it.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The longest id, in bytes.
pub const MAX_ID_BYTES: usize = 128;

/// The regular expression of the id rule, as the JSON Schema states it.
pub const ID_PATTERN: &str = "^[A-Za-z0-9_.:-]+$";

/// A Git object id in full: SHA-1 or SHA-256 hex.
pub const REVISION_PATTERN: &str = "^(?:[0-9A-Fa-f]{40}|[0-9A-Fa-f]{64})$";

/// Why a text is not an id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdFault {
    Empty,
    /// `.` or `..`: they name folders, not things.
    DotSegment,
    TooLong {
        bytes: usize,
    },
    /// A byte outside `A–Z a–z 0–9 _ . : -`.
    Character,
}

impl IdFault {
    /// One sentence naming the field, as error messages show it.
    pub fn describe(self, field: &str, text: &str) -> String {
        match self {
            IdFault::Empty => format!("{field} must not be empty"),
            IdFault::DotSegment => {
                format!("{field} {text:?} is not an id: `.` and `..` name folders")
            }
            IdFault::TooLong { bytes } => {
                format!("{field} is {bytes} bytes long; the limit is {MAX_ID_BYTES}")
            }
            IdFault::Character => {
                format!("{field} {text:?} may contain only letters, digits, '_', '.', ':' and '-'")
            }
        }
    }
}

/// Checks `text` against the id rule.
pub fn check_id_text(text: &str) -> Result<(), IdFault> {
    if text.is_empty() {
        Err(IdFault::Empty)
    } else if text == "." || text == ".." {
        Err(IdFault::DotSegment)
    } else if text.len() > MAX_ID_BYTES {
        Err(IdFault::TooLong { bytes: text.len() })
    } else if !text
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b':' | b'-'))
    {
        Err(IdFault::Character)
    } else {
        Ok(())
    }
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// `text` as an id, if it passes the id rule.
            pub fn parse(text: &str) -> Result<$name, IdFault> {
                check_id_text(text).map(|()| $name(text.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as one path component. The id rule allows no `/` and neither `.` nor
            /// `..`, so it is the id itself and cannot name a folder above the one it is
            /// joined to.
            pub fn path_segment(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(text: String) -> Result<$name, String> {
                match check_id_text(&text) {
                    Ok(()) => Ok($name(text)),
                    Err(fault) => Err(fault.describe(stringify!($name), &text)),
                }
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                self == other.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }

        impl JsonSchema for $name {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                schemars::json_schema!({
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_ID_BYTES,
                    "pattern": ID_PATTERN,
                })
            }
        }
    };
}

id_type!(
    /// The id of a mission, chosen by whoever creates it.
    MissionId
);
id_type!(
    /// The id of a run of a mission, chosen by whoever starts or hands off the mission.
    RunId
);
id_type!(
    /// The id of an attention item, made by nagi from the run and the provider's request.
    AttentionId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_rule_refuses_folders_separators_and_overlong_text() {
        assert!(RunId::parse("run-1.a:b_c").is_ok());
        assert!(RunId::parse(&"a".repeat(MAX_ID_BYTES)).is_ok());
        assert_eq!(
            RunId::parse(&"a".repeat(MAX_ID_BYTES + 1)),
            Err(IdFault::TooLong {
                bytes: MAX_ID_BYTES + 1
            })
        );
        assert_eq!(MissionId::parse(""), Err(IdFault::Empty));
        assert_eq!(MissionId::parse("."), Err(IdFault::DotSegment));
        assert_eq!(MissionId::parse(".."), Err(IdFault::DotSegment));
        assert_eq!(MissionId::parse("../escape"), Err(IdFault::Character));
        assert_eq!(MissionId::parse("a/b"), Err(IdFault::Character));
        assert_eq!(MissionId::parse("ünicode"), Err(IdFault::Character));
        assert_eq!(MissionId::parse("nul\0"), Err(IdFault::Character));
    }

    #[test]
    fn a_typed_id_is_exactly_one_path_component() {
        let id = RunId::parse("..x").unwrap();
        let joined = std::path::Path::new("/base").join(id.path_segment());
        assert_eq!(joined.parent(), Some(std::path::Path::new("/base")));
        assert_eq!(joined.components().count(), 3);
    }

    #[test]
    fn deserializing_checks_the_rule_and_serializing_gives_the_text_back() {
        let id: MissionId = serde_json::from_str("\"m-1\"").unwrap();
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"m-1\"");
        let refused = serde_json::from_str::<MissionId>("\"..\"").unwrap_err();
        assert!(refused.to_string().contains("name folders"), "{refused}");
    }
}
