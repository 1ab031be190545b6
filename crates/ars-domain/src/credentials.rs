//! Password hashing and API token secrets.
//!
//! Hashing is CPU-bound (argon2 is slow on purpose): async callers must run
//! [`hash_password`] and [`verify_password`] on a blocking thread.

use argon2::Argon2;
use argon2::password_hash::{
    PasswordHash, PasswordHasher, PasswordVerifier, SaltString, rand_core::OsRng,
};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Every token secret starts with this, so leaked tokens are easy to recognise and scan for.
pub const TOKEN_PREFIX: &str = "ars_";

#[derive(Debug, thiserror::Error)]
#[error("password hashing failed: {0}")]
pub struct HashError(String);

/// Hashes a password with argon2id and a random salt (PHC string format).
pub fn hash_password(password: &str) -> Result<String, HashError> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| HashError(e.to_string()))
}

/// Checks a password against a stored PHC hash; a malformed hash never verifies.
pub fn verify_password(password: &str, stored_hash: &str) -> bool {
    PasswordHash::new(stored_hash).is_ok_and(|hash| {
        Argon2::default()
            .verify_password(password.as_bytes(), &hash)
            .is_ok()
    })
}

/// A new random token secret: the prefix and 32 random bytes, base64url.
pub fn generate_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// A random password (for the first admin, or `ars user add` without one): 24 base64url
/// characters (144 bits), or more when `min_chars` asks for more.
pub fn generate_password(min_chars: usize) -> String {
    // Three bytes make four characters.
    let mut bytes = vec![0u8; min_chars.div_ceil(4).saturating_mul(3).clamp(18, 768)];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// What the store keeps of a token: its SHA-256, hex. Tokens are high-entropy, so a fast
/// hash is enough and lets lookups go through an index.
pub fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_verifies_only_itself() {
        let hash = hash_password("correct horse").unwrap();
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong horse", &hash));
        assert!(!verify_password("correct horse", "not a hash"));
    }

    #[test]
    fn generated_passwords_meet_the_asked_length() {
        assert_eq!(generate_password(12).len(), 24);
        assert_eq!(generate_password(30).len(), 32);
        assert_ne!(generate_password(12), generate_password(12));
    }

    #[test]
    fn tokens_are_unique_prefixed_and_hash_stably() {
        let (a, b) = (generate_token(), generate_token());
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX));
        assert_eq!(token_hash(&a), token_hash(&a));
        assert_eq!(token_hash(&a).len(), 64);
    }
}
