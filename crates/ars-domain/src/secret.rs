//! Secrets at rest: a server key and the values sealed with it.
//!
//! A [`SecretKey`] (32 bytes) seals a secret (a provider's API key, a header value) into a
//! [`Sealed`] text with XChaCha20-Poly1305 and a fresh random 192-bit nonce per value, so the
//! same secret sealed twice never looks the same. The sealing also authenticates a *context*
//! (e.g. `model_provider/<id>/api_key`): a sealed value copied to another row or field does not
//! open there.
//!
//! The text form is `v1.<key id>.<base64url(nonce ‖ ciphertext ‖ tag)>`. The key id (8 hex
//! digits of a SHA-256 over the key) names which key sealed a value, so a value sealed with
//! another key is reported as exactly that ([`SecretError::WrongKey`]) rather than as damage.
//!
//! Where the key comes from (the environment, a key file) is the binary's business; this module
//! does no I/O besides asking the operating system for random bytes.
//!
//! **Invariant:** neither a key nor an opened secret reaches `Debug` output or an error message.

use std::fmt;

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

/// The prefix of every sealed value this version writes.
const VERSION: &str = "v1";

/// XChaCha20-Poly1305's nonce length.
const NONCE_LEN: usize = 24;

/// Poly1305's tag length.
const TAG_LEN: usize = 16;

/// Why a key or a sealed value could not be used. The messages name the problem in plain
/// words and never hold a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// A key given as text is not the base64 of 32 bytes.
    #[error("the secret key must be the base64 of 32 bytes (e.g. `openssl rand -base64 32`); {0}")]
    BadKey(String),
    /// The value was sealed with another server key.
    #[error(
        "the value was encrypted with another server key (key id {found}; this server's is \
         {current}): restore the key it was written with (ARS_SECRET_KEY or the key file in the \
         data dir), or enter the secret again"
    )]
    WrongKey { found: String, current: String },
    /// The value was sealed with this key but has been altered, truncated or moved to another
    /// row or field.
    #[error(
        "the encrypted value is damaged or does not belong here and cannot be decrypted; enter \
         the secret again"
    )]
    Tampered,
    /// The text is not a sealed value at all.
    #[error("the stored value is not an encrypted secret of this server")]
    Malformed,
}

/// The server's key for secrets at rest. Its bytes are wiped when it is dropped; `Debug` shows
/// only its id.
#[derive(Clone)]
pub struct SecretKey {
    bytes: Zeroizing<[u8; SecretKey::LEN]>,
    id: String,
}

impl SecretKey {
    /// The key length in bytes.
    pub const LEN: usize = 32;

    /// A key of these bytes.
    pub fn from_bytes(bytes: [u8; Self::LEN]) -> Self {
        let id = key_id(&bytes);
        Self {
            bytes: Zeroizing::new(bytes),
            id,
        }
    }

    /// A fresh random key.
    pub fn generate() -> Self {
        let key = XChaCha20Poly1305::generate_key(&mut OsRng);
        let mut bytes = [0u8; Self::LEN];
        bytes.copy_from_slice(key.as_slice());
        Self::from_bytes(bytes)
    }

    /// Reads a key written as base64 (standard alphabet, padded or not, surrounding white space
    /// ignored), as `ARS_SECRET_KEY` and the key file hold it.
    pub fn from_base64(text: &str) -> Result<Self, SecretError> {
        let text = text.trim();
        let decoded = Zeroizing::new(
            STANDARD
                .decode(text)
                .or_else(|_| STANDARD_NO_PAD.decode(text))
                .map_err(|_| SecretError::BadKey("the text is not base64".into()))?,
        );
        let bytes: [u8; Self::LEN] = decoded
            .as_slice()
            .try_into()
            .map_err(|_| SecretError::BadKey(format!("it decodes to {} bytes", decoded.len())))?;
        Ok(Self::from_bytes(bytes))
    }

    /// The key as base64 (standard alphabet, padded), for writing the key file.
    pub fn to_base64(&self) -> Zeroizing<String> {
        Zeroizing::new(STANDARD.encode(self.bytes.as_slice()))
    }

    /// A short public name of the key (8 hex digits), stored with every value it seals.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(self.bytes.as_slice().into())
    }

    /// Seals `secret`, bound to `context` (which must be given again to open it).
    pub fn seal(&self, context: &str, secret: &str) -> Sealed {
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let payload = Payload {
            msg: secret.as_bytes(),
            aad: context.as_bytes(),
        };
        // Encryption fails only for messages beyond the cipher's limit (256 GiB); a secret is
        // bounded long before that by the API, so an empty sealed value cannot result.
        let ciphertext = self.cipher().encrypt(&nonce, payload).unwrap_or_default();
        let mut blob = Vec::with_capacity(NONCE_LEN + ciphertext.len());
        blob.extend_from_slice(nonce.as_slice());
        blob.extend_from_slice(&ciphertext);
        Sealed(format!(
            "{VERSION}.{}.{}",
            self.id,
            URL_SAFE_NO_PAD.encode(blob)
        ))
    }

    /// Opens a value this key sealed for `context`.
    pub fn open(&self, context: &str, sealed: &Sealed) -> Result<Zeroizing<String>, SecretError> {
        let (version, found, body) = sealed.parts().ok_or(SecretError::Malformed)?;
        if version != VERSION {
            return Err(SecretError::Malformed);
        }
        if found != self.id {
            return Err(SecretError::WrongKey {
                found: found.to_string(),
                current: self.id.clone(),
            });
        }
        let blob = URL_SAFE_NO_PAD
            .decode(body)
            .map_err(|_| SecretError::Malformed)?;
        if blob.len() < NONCE_LEN + TAG_LEN {
            return Err(SecretError::Malformed);
        }
        let (nonce, ciphertext) = blob.split_at(NONCE_LEN);
        let payload = Payload {
            msg: ciphertext,
            aad: context.as_bytes(),
        };
        let plain = Zeroizing::new(
            self.cipher()
                .decrypt(XNonce::from_slice(nonce), payload)
                .map_err(|_| SecretError::Tampered)?,
        );
        String::from_utf8(plain.to_vec())
            .map(Zeroizing::new)
            .map_err(|_| SecretError::Tampered)
    }
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretKey(id {})", self.id)
    }
}

/// The key id: 8 hex digits of a SHA-256 over a label and the key. Public by design: it names
/// the key, and 32 bits of a hash say nothing useful about 256 bits of key.
fn key_id(bytes: &[u8; SecretKey::LEN]) -> String {
    let digest = Sha256::new()
        .chain_update(b"ars secret key id\0")
        .chain_update(bytes)
        .finalize();
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// A sealed secret as stored: safe to keep in a database, useless without the key. `Debug`
/// shows only which key sealed it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Sealed(String);

impl Sealed {
    /// Wraps a value read back from storage (checked only when opened).
    pub fn from_stored(text: String) -> Self {
        Self(text)
    }

    /// The text to store.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The id of the key that sealed it, if the text has the sealed form.
    pub fn key_id(&self) -> Option<&str> {
        self.parts().map(|(_, id, _)| id)
    }

    fn parts(&self) -> Option<(&str, &str, &str)> {
        let mut parts = self.0.splitn(3, '.');
        Some((parts.next()?, parts.next()?, parts.next()?))
    }
}

impl fmt::Debug for Sealed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sealed(key {})", self.key_id().unwrap_or("?"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_with_the_key_and_context_they_were_sealed_with() {
        let key = SecretKey::generate();
        let sealed = key.seal("provider/1/api_key", "sk-very-secret");
        assert_eq!(
            key.open("provider/1/api_key", &sealed).unwrap().as_str(),
            "sk-very-secret"
        );
        assert!(!sealed.as_str().contains("sk-very-secret"));
        // A fresh nonce each time: the same secret never seals the same way twice.
        assert_ne!(sealed, key.seal("provider/1/api_key", "sk-very-secret"));
        assert_eq!(sealed.key_id(), Some(key.id()));
        let empty = key.seal("c", "");
        assert_eq!(key.open("c", &empty).unwrap().as_str(), "");
    }

    #[test]
    fn tampered_or_moved_values_do_not_open() {
        let key = SecretKey::generate();
        let sealed = key.seal("provider/1/api_key", "sk-very-secret");
        assert_eq!(
            key.open("provider/2/api_key", &sealed).err(),
            Some(SecretError::Tampered),
            "another context"
        );
        // Flip one character of the ciphertext.
        let mut text = sealed.as_str().to_string();
        let last = text.pop().unwrap();
        text.push(if last == 'A' { 'B' } else { 'A' });
        assert_eq!(
            key.open("provider/1/api_key", &Sealed::from_stored(text))
                .err(),
            Some(SecretError::Tampered)
        );
        for garbage in ["", "v1", "v1.x", "v2.abc.def", "plain text"] {
            let error = key
                .open("c", &Sealed::from_stored(garbage.into()))
                .err()
                .unwrap();
            assert!(
                matches!(error, SecretError::Malformed | SecretError::WrongKey { .. }),
                "{garbage}: {error:?}"
            );
        }
        let short = format!("v1.{}.AAAA", key.id());
        assert_eq!(
            key.open("c", &Sealed::from_stored(short)).err(),
            Some(SecretError::Malformed)
        );
    }

    #[test]
    fn a_value_sealed_with_another_key_says_so_without_the_secret() {
        let old = SecretKey::generate();
        let new = SecretKey::generate();
        let sealed = old.seal("c", "sk-very-secret");
        let error = new.open("c", &sealed).err().unwrap();
        assert!(matches!(error, SecretError::WrongKey { .. }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("another server key"), "{message}");
        assert!(message.contains(old.id()) && message.contains(new.id()));
        assert!(!message.contains("sk-very-secret"));
    }

    #[test]
    fn keys_read_base64_and_never_print_themselves() {
        let key = SecretKey::generate();
        let text = key.to_base64();
        let again = SecretKey::from_base64(&format!("  {}\n", text.as_str())).unwrap();
        assert_eq!(again.id(), key.id());
        let unpadded = text.trim_end_matches('=').to_string();
        assert_eq!(SecretKey::from_base64(&unpadded).unwrap().id(), key.id());
        let sealed = key.seal("c", "x");
        assert_eq!(again.open("c", &sealed).unwrap().as_str(), "x");
        let debug = format!("{key:?} {sealed:?}");
        assert!(!debug.contains(text.as_str()), "{debug}");
        assert!(debug.contains(key.id()));
        for bad in ["", "not base64!", "c2hvcnQ="] {
            let error = SecretKey::from_base64(bad).err().unwrap();
            assert!(matches!(error, SecretError::BadKey(_)), "{bad}");
        }
        assert!(
            SecretKey::from_base64("c2hvcnQ=")
                .err()
                .unwrap()
                .to_string()
                .contains("5 bytes")
        );
    }
}
