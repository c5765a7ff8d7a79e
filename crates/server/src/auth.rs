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
            let h = hash(token);
            if let Some((other, _)) = uploaders.iter().find(|(_, t)| *t == h) {
                return Err(format!(
                    "line {n}: the token of {name} is {other}'s too; give each uploader a token of its own"
                ));
            }
            uploaders.push((name.to_string(), h));
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

/// The token that makes reading private (`--read-token`), as its hash.
#[derive(Debug, Clone)]
pub struct ReadToken([u8; 32]);

impl ReadToken {
    /// A read token; at least [`MIN_TOKEN_LEN`] printable ASCII characters.
    pub fn new(token: &str) -> Result<ReadToken, String> {
        if token.len() < MIN_TOKEN_LEN || !token.chars().all(|c| c.is_ascii_graphic()) {
            return Err(format!(
                "give at least {MIN_TOKEN_LEN} printable ASCII characters"
            ));
        }
        Ok(ReadToken(hash(token)))
    }

    /// Whether a request's `Authorization` value carries the token: `Bearer TOKEN` for
    /// scripts, or HTTP Basic with any user name and the token as password (what a
    /// browser asks for).
    pub fn allows(&self, authorization: Option<&str>) -> bool {
        use base64::Engine as _;
        let Some(value) = authorization else {
            return false;
        };
        let token = if let Some(t) = value.strip_prefix("Bearer ") {
            t.trim().to_string()
        } else if let Some(b) = value.strip_prefix("Basic ") {
            let Ok(raw) = base64::engine::general_purpose::STANDARD.decode(b.trim()) else {
                return false;
            };
            let text = String::from_utf8_lossy(&raw).into_owned();
            match text.split_once(':') {
                Some((_, password)) => password.to_string(),
                None => return false,
            }
        } else {
            return false;
        };
        let h = hash(&token);
        self.0
            .iter()
            .zip(h.iter())
            .fold(0u8, |d, (a, b)| d | (a ^ b))
            == 0
    }
}

/// Lets a request through to the pages only with the read token (see [`ReadToken`]);
/// otherwise 401 with the challenge that makes a browser ask for it.
pub async fn require_read(
    token: ReadToken,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::header;
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if token.allows(given) {
        return next.run(req).await;
    }
    let mut r = crate::pages::layout::error_page(
        axum::http::StatusCode::UNAUTHORIZED,
        "this server's results are private: give its read token (as the password)",
    );
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        axum::http::HeaderValue::from_static("Basic realm=\"drivelab results\", charset=\"UTF-8\""),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_token_is_taken_as_bearer_or_basic_password() {
        let t = ReadToken::new("read-0123456789abcdef").unwrap();
        assert!(t.allows(Some("Bearer read-0123456789abcdef")));
        // "anyone:read-0123456789abcdef"
        assert!(t.allows(Some("Basic YW55b25lOnJlYWQtMDEyMzQ1Njc4OWFiY2RlZg==")));
        assert!(!t.allows(Some("Bearer read-0123456789abcdeF")));
        assert!(!t.allows(Some("Basic !!!")));
        assert!(!t.allows(None));
        assert!(ReadToken::new("short").is_err());
    }

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
            (
                "# lab\na 0123456789abcdef0\nb 0123456789abcdef0\n",
                "line 3: the token of b is a's too",
            ),
        ] {
            let e = Tokens::parse(text).unwrap_err();
            assert!(e.contains(want), "{e:?} lacks {want:?}");
        }
    }
}
