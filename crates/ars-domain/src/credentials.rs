//! Password hashing and API token secrets.
//!
//! Hashing is CPU-bound (argon2 is slow on purpose): async callers must run
//! [`hash_password`] and [`verify_password`] on a blocking thread.

use argon2::password_hash::{
    self, Decimal, Ident, Output, ParamsString, PasswordHash, PasswordHasher, PasswordVerifier,
    Salt, SaltString, errors::InvalidValue, rand_core::OsRng,
};
use argon2::{Algorithm, Argon2, Block, Params, Version};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Every token secret starts with this, so leaked tokens are easy to recognise and scan for.
pub const TOKEN_PREFIX: &str = "ars_";

/// The most memory a stored hash may ask of a verification: 256 MiB (argon2's `m` in KiB).
/// Our hashes ask 19 MiB; a hash asking more never verifies rather than taking the memory.
const MAX_M_COST: u32 = 256 * 1024;

/// A hash's memory is asked of the allocator with room for at least this much (33 MiB), past
/// glibc's highest mmap threshold (32 MiB on 64-bit): a request that large is always mapped
/// afresh and unmapped when freed, and the threshold never rises past it. Only the blocks the
/// hash uses are written, so only they become resident, and only while it runs. A 19 MiB
/// request, as `argon2` makes by default, came once the threshold had risen from whichever
/// arena had freed the last one and stayed there: a burst of logins left the server holding
/// hundreds of MiB; kept by each hashing thread instead, 19 MiB stayed resident per thread.
const MAPPED_BYTES: usize = 33 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
#[error("password hashing failed: {0}")]
pub struct HashError(String);

/// `blocks` blocks of hashing memory, zeroed, in an allocation the system maps for it and gets
/// back when it is dropped (see [`MAPPED_BYTES`]).
fn hashing_memory(blocks: usize) -> Vec<Block> {
    let room = blocks.max(MAPPED_BYTES / std::mem::size_of::<Block>());
    let mut memory = Vec::with_capacity(room);
    memory.resize(blocks, Block::default());
    memory
}

/// argon2 (the algorithm, version and parameters of the hash at hand) on memory mapped for the
/// hash and given back after it (see [`MAPPED_BYTES`]): what [`PasswordHasher`] and so
/// [`PasswordVerifier`] compute.
struct MappedMemory;

impl PasswordHasher for MappedMemory {
    type Params = Params;

    fn hash_password_customized<'a>(
        &self,
        password: &[u8],
        algorithm: Option<Ident<'a>>,
        version: Option<Decimal>,
        params: Params,
        salt: impl Into<Salt<'a>>,
    ) -> password_hash::Result<PasswordHash<'a>> {
        let algorithm = algorithm
            .map(Algorithm::try_from)
            .transpose()?
            .unwrap_or_default();
        let version = version
            .map(Version::try_from)
            .transpose()?
            .unwrap_or_default();
        if params.m_cost() > MAX_M_COST {
            return Err(password_hash::Error::ParamValueInvalid(
                InvalidValue::TooLong,
            ));
        }
        let salt = salt.into();
        let mut salt_bytes = [0u8; 64];
        let salt_bytes = salt.decode_b64(&mut salt_bytes)?;
        let blocks = params.block_count();
        let output_len = params.output_len().unwrap_or(Params::DEFAULT_OUTPUT_LEN);
        let argon2 = Argon2::new(algorithm, version, params.clone());
        let mut memory = hashing_memory(blocks);
        let output = Output::init_with(output_len, |out| {
            Ok(argon2.hash_password_into_with_memory(password, salt_bytes, out, &mut memory)?)
        })?;
        Ok(PasswordHash {
            algorithm: algorithm.ident(),
            version: Some(version.into()),
            params: ParamsString::try_from(&params)?,
            salt: Some(salt),
            hash: Some(output),
        })
    }
}

/// Hashes a password with argon2id and a random salt (PHC string format).
pub fn hash_password(password: &str) -> Result<String, HashError> {
    let salt = SaltString::generate(&mut OsRng);
    MappedMemory
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| HashError(e.to_string()))
}

/// Checks a password against a stored PHC hash; a malformed hash never verifies.
pub fn verify_password(password: &str, stored_hash: &str) -> bool {
    PasswordHash::new(stored_hash).is_ok_and(|hash| {
        MappedMemory
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
    fn hashes_are_argon2s_own_both_ways() {
        // Ours verifies with the algorithm's own verifier, and its hashes verify with ours.
        let ours = hash_password("correct horse").unwrap();
        assert!(
            ours.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{ours}"
        );
        let parsed = PasswordHash::new(&ours).unwrap();
        assert!(
            Argon2::default()
                .verify_password(b"correct horse", &parsed)
                .is_ok()
        );
        assert!(
            Argon2::default()
                .verify_password(b"wrong horse", &parsed)
                .is_err()
        );
        let salt = SaltString::generate(&mut OsRng);
        for theirs in [
            Argon2::default().hash_password(b"battery staple", &salt),
            Argon2::new(
                Algorithm::Argon2i,
                Version::V0x10,
                Params::new(64, 3, 2, None).unwrap(),
            )
            .hash_password(b"battery staple", &salt),
        ] {
            let theirs = theirs.unwrap().to_string();
            assert!(verify_password("battery staple", &theirs), "{theirs}");
            assert!(!verify_password("battery stapler", &theirs), "{theirs}");
        }
    }

    #[test]
    fn a_stored_hash_that_asks_for_absurd_memory_never_verifies() {
        let salt = SaltString::generate(&mut OsRng);
        let params = Params::new(MAX_M_COST + 1, 1, 1, None).unwrap();
        let hash = PasswordHash {
            algorithm: Algorithm::Argon2id.ident(),
            version: Some(Version::V0x13.into()),
            params: ParamsString::try_from(&params).unwrap(),
            salt: Some(salt.as_salt()),
            hash: Some(Output::new(&[0u8; 32]).unwrap()),
        }
        .to_string();
        assert!(!verify_password("anything", &hash));
    }

    #[test]
    fn hashing_memory_is_asked_past_the_allocators_mmap_threshold_and_holds_the_hashs_blocks() {
        let blocks = Params::DEFAULT.block_count();
        let memory = hashing_memory(blocks);
        assert_eq!(memory.len(), blocks);
        assert!(memory.capacity() * std::mem::size_of::<Block>() > 32 * 1024 * 1024);
        let larger = MAPPED_BYTES / std::mem::size_of::<Block>() + 1;
        assert_eq!(hashing_memory(larger).len(), larger);
    }

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
