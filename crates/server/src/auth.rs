//! Who may upload: the `--tokens` file (a line `NAME TOKEN` per uploader) read into
//! hashes; the tokens themselves are not kept in memory once hashed.

use sha2::{Digest, Sha256};

/// Shortest token accepted in a tokens file (a guessable token is no token).
pub const MIN_TOKEN_LEN: usize = 16;

/// The uploaders: names and the SHA-256 of their tokens.
#[derive(Debug, Clone, Default)]
pub struct Tokens {
    uploaders: Vec<(String, [u8; 32])>,
}

fn hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Tokens {
    /// Parses a tokens file: one `NAME TOKEN` per line, `#` comments and blank lines
    /// ignored. The message names the line and the accepted form.
    pub fn parse(text: &str) -> Result<Tokens, String> {
        let mut uploaders: Vec<(String, [u8; 32])> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let n = i + 1;
            let mut words = line.split_whitespace();
            let (Some(name), Some(token), None) = (words.next(), words.next(), words.next()) else {
                return Err(format!("line {n}: give NAME TOKEN (two words)"));
            };
            if token.len() < MIN_TOKEN_LEN || !token.chars().all(|c| c.is_ascii_graphic()) {
                return Err(format!(
                    "line {n}: the token of {name} must be at least {MIN_TOKEN_LEN} printable ASCII characters"
                ));
            }
            if uploaders.iter().any(|(u, _)| u == name) {
                return Err(format!("line {n}: {name} is named twice"));
            }
            uploaders.push((name.to_string(), hash(token)));
        }
        Ok(Tokens { uploaders })
    }

    /// Whether anyone may upload.
    pub fn is_empty(&self) -> bool {
        self.uploaders.is_empty()
    }

    /// How many uploaders there are.
    pub fn len(&self) -> usize {
        self.uploaders.len()
    }

    /// The uploader whose token this is. Every hash is compared in full (no early exit),
    /// so the time taken tells nothing about how close a wrong token was.
    pub fn uploader(&self, token: &str) -> Option<&str> {
        let h = hash(token);
        let mut found = None;
        for (name, stored) in &self.uploaders {
            let diff = stored
                .iter()
                .zip(h.iter())
                .fold(0u8, |d, (a, b)| d | (a ^ b));
            if diff == 0 {
                found = Some(name.as_str());
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_found_by_hash_and_bad_lines_named() {
        let t = Tokens::parse("# lab\nrig1 0123456789abcdef0123\n\nrig2 fedcba9876543210fedc\n")
            .unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t.uploader("fedcba9876543210fedc"), Some("rig2"));
        assert_eq!(t.uploader("fedcba9876543210fedd"), None);
        assert_eq!(t.uploader(""), None);
        for (text, want) in [
            ("rig1\n", "line 1: give NAME TOKEN"),
            ("rig1 short\n", "at least 16"),
            (
                "a 0123456789abcdef0\na 0123456789abcdef1\n",
                "line 2: a is named twice",
            ),
            ("a 0123456789abcdef0 extra\n", "two words"),
        ] {
            let e = Tokens::parse(text).unwrap_err();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        }
    }
}
