//! The on-disk cache of compiled kernel modules. An entry is one file named by its key (a hash of
//! the source, the compile options, the architecture and the NVRTC version) holding a header, the
//! key again, the length and a checksum of the CUBIN that follows. An entry that does not check
//! out in every field is treated as missing and rebuilt; nothing read from the cache is trusted
//! before that.

use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"RXPCUBN1";
const HEADER: usize = 8 + 8 + 8 + 8;

/// 64-bit FNV-1a: a stable hash (the same in every build and on every machine) for cache keys and
/// checksums. Not cryptographic; it guards against accidents, not attackers.
pub fn fnv64(parts: &[&[u8]]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for p in parts {
        for &b in *p {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        // separate parts so that ("ab", "c") and ("a", "bc") differ
        h ^= 0xff;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The default cache folder: `$RXPIPE_CACHE_DIR`, else `$XDG_CACHE_HOME/rxpipe/kernels`, else
/// `$HOME/.cache/rxpipe/kernels`; `None` when none of these is set.
pub fn default_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("RXPIPE_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("rxpipe").join("kernels")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("rxpipe").join("kernels")))
}

/// The file of the entry `key` in `dir`.
pub fn entry_path(dir: &Path, key: u64) -> PathBuf {
    dir.join(format!("{key:016x}.cubin"))
}

/// Reads the entry `key`, or `None` when it is missing, unreadable, truncated, or fails any check.
pub fn load(dir: &Path, key: u64) -> Option<Vec<u8>> {
    let bytes = std::fs::read(entry_path(dir, key)).ok()?;
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return None;
    }
    let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap());
    let (stored_key, len, sum) = (word(8), word(16), word(24));
    let body = &bytes[HEADER..];
    (stored_key == key && len == body.len() as u64 && sum == fnv64(&[body])).then(|| body.to_vec())
}

/// Writes the entry `key` (to a temporary file first, then renamed into place, so that readers
/// never see half an entry). Failing to write is not an error: the module is simply not cached.
pub fn store(dir: &Path, key: u64, cubin: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut bytes = Vec::with_capacity(HEADER + cubin.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&key.to_le_bytes());
    bytes.extend_from_slice(&(cubin.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&fnv64(&[cubin]).to_le_bytes());
    bytes.extend_from_slice(cubin);
    let path = entry_path(dir, key);
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let written = std::fs::write(&tmp, &bytes).and_then(|()| std::fs::rename(&tmp, &path));
    if written.is_err() {
        // a full disk leaves half a file: take it away rather than leave it to fill the folder
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_every_corruption_is_a_miss() {
        let dir = std::env::temp_dir().join(format!("rxpipe-cache-test-{}", std::process::id()));
        let body = b"not really a cubin, but bytes all the same".to_vec();
        store(&dir, 42, &body).unwrap();
        assert_eq!(load(&dir, 42), Some(body.clone()));
        assert_eq!(load(&dir, 43), None);
        let path = entry_path(&dir, 42);
        let good = std::fs::read(&path).unwrap();
        // flip one byte anywhere: header, key, length, checksum or body
        for i in [0, 9, 17, 25, HEADER + 3] {
            let mut bad = good.clone();
            bad[i] ^= 0x40;
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(load(&dir, 42), None, "corruption at byte {i} was trusted");
        }
        std::fs::write(&path, &good[..good.len() - 1]).unwrap();
        assert_eq!(load(&dir, 42), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_folder_that_cannot_be_made_is_an_error_and_a_miss() {
        // the cache folder's parent is a file: nothing can be created there
        let file = std::env::temp_dir().join(format!("rxpipe-cache-file-{}", std::process::id()));
        std::fs::write(&file, b"a file, not a folder").unwrap();
        let dir = file.join("cache");
        assert!(store(&dir, 7, b"bytes").is_err());
        assert_eq!(load(&dir, 7), None);
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn keys_separate_their_parts() {
        assert_ne!(fnv64(&[b"ab", b"c"]), fnv64(&[b"a", b"bc"]));
        assert_eq!(fnv64(&[b"x"]), fnv64(&[b"x"]));
    }
}
