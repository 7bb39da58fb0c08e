//! Who may do what: bearer tokens, each with one scope.
//!
//! | scope | allows |
//! |---|---|
//! | `push` | `POST /api/runs`, `/api/pairs`, `/api/runs/{id}/artifacts` (ingest) |
//! | `read` | every page and `GET /api/...`, when the server is private |
//!
//! A server has any number of tokens (`--token push:SECRET`, `--tokens-file`, the older
//! `--ingest-token SECRET` is a push token). Reads are open to anyone unless the server is
//! private (`--private`); then they need a read token. So a leaked runner token (push) can add
//! runs but read nothing of a private server, and a dashboard token (read) cannot push.
//!
//! A token is presented as `Authorization: Bearer SECRET`, or, for browsers, as the password of
//! HTTP Basic authentication (any user name). Secrets are kept only as SHA-256 digests and
//! compared in constant time against every configured token, so neither a secret, its length
//! nor which token matched leaks through timing.
//!
//! | request | answer |
//! |---|---|
//! | no token, or one that matches none | 401, with `WWW-Authenticate` |
//! | a token of another scope | 403 |
//! | a push, and the server has no push token | 403: ingest is disabled |

use crate::error::AppError;
use axum::http::{HeaderMap, header};
use base64::Engine as _;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What a token allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Pushing runs.
    Push,
    /// Reading pages and the JSON API of a private server.
    Read,
}

impl Scope {
    /// The scope's name in a token spec.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Push => "push",
            Self::Read => "read",
        }
    }
}

/// A secret, kept only as its SHA-256 digest.
pub struct Token([u8; 32]);

impl Token {
    /// Wraps `secret`.
    #[must_use]
    pub fn new(secret: &str) -> Self {
        Self(Sha256::digest(secret.as_bytes()).into())
    }

    /// Whether `presented` is the secret, in time independent of both.
    #[must_use]
    pub fn matches(&self, presented: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        bool::from(self.0.ct_eq(&digest))
    }
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(<redacted>)")
    }
}

/// Shortest accepted secret: a guessable token is no protection.
pub const MIN_SECRET_LEN: usize = 16;

/// A token spec that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Not `SCOPE:SECRET`, or an unknown scope.
    #[error("a token is SCOPE:SECRET with SCOPE push or read, got {0:?}")]
    Malformed(String),
    /// A secret shorter than [`MIN_SECRET_LEN`] or holding whitespace.
    #[error(
        "the {scope} token's secret must be at least {MIN_SECRET_LEN} characters without \
         whitespace"
    )]
    WeakSecret {
        /// The scope it was for.
        scope: &'static str,
    },
}

/// Parses `SCOPE:SECRET` (the secret redacted from every error).
///
/// # Errors
/// See [`SpecError`].
pub fn parse_spec(spec: &str) -> Result<(Scope, String), SpecError> {
    let (scope, secret) = spec
        .split_once(':')
        .ok_or_else(|| SpecError::Malformed(redact(spec)))?;
    let scope = match scope.trim() {
        "push" => Scope::Push,
        "read" => Scope::Read,
        _ => return Err(SpecError::Malformed(redact(spec))),
    };
    check_secret(scope, secret)?;
    Ok((scope, secret.to_owned()))
}

/// Checks that `secret` is long enough and free of whitespace.
///
/// # Errors
/// [`SpecError::WeakSecret`].
pub fn check_secret(scope: Scope, secret: &str) -> Result<(), SpecError> {
    if secret.chars().count() < MIN_SECRET_LEN || secret.chars().any(char::is_whitespace) {
        return Err(SpecError::WeakSecret {
            scope: scope.name(),
        });
    }
    Ok(())
}

fn redact(spec: &str) -> String {
    match spec.split_once(':') {
        Some((scope, _)) => format!("{scope}:<redacted>"),
        None => "<redacted>".to_owned(),
    }
}

/// The server's tokens and whether reading needs one.
#[derive(Debug, Default)]
pub struct Access {
    tokens: Vec<(Scope, Token)>,
    private: bool,
}

impl Access {
    /// No tokens: reads open, ingest disabled.
    #[must_use]
    pub fn open() -> Self {
        Self::default()
    }

    /// Adds a token.
    #[must_use]
    pub fn with_token(mut self, scope: Scope, secret: &str) -> Self {
        self.tokens.push((scope, Token::new(secret)));
        self
    }

    /// Makes reads need a read token.
    #[must_use]
    pub const fn private(mut self, private: bool) -> Self {
        self.private = private;
        self
    }

    /// Whether reads need a read token.
    #[must_use]
    pub const fn is_private(&self) -> bool {
        self.private
    }

    /// Whether some token may push.
    #[must_use]
    pub fn ingest_enabled(&self) -> bool {
        self.tokens.iter().any(|(s, _)| *s == Scope::Push)
    }

    /// Whether some token may read.
    #[must_use]
    pub fn has_read_token(&self) -> bool {
        self.tokens.iter().any(|(s, _)| *s == Scope::Read)
    }

    /// The scopes of the tokens `presented` matches (every token is compared).
    fn scopes_of(&self, presented: &str) -> (bool, bool) {
        let (mut push, mut read) = (false, false);
        for (scope, token) in &self.tokens {
            let hit = token.matches(presented);
            match scope {
                Scope::Push => push |= hit,
                Scope::Read => read |= hit,
            }
        }
        (push, read)
    }

    /// Whether the request with `headers` may do what `scope` allows (module docs).
    ///
    /// # Errors
    /// [`AppError::IngestDisabled`], [`AppError::Unauthorized`] or [`AppError::Forbidden`].
    pub fn check(&self, headers: &HeaderMap, scope: Scope) -> Result<(), AppError> {
        match scope {
            Scope::Push if !self.ingest_enabled() => return Err(AppError::IngestDisabled),
            Scope::Read if !self.private => return Ok(()),
            _ => {}
        }
        let presented = presented_secret(headers).ok_or(AppError::Unauthorized)?;
        let (push, read) = self.scopes_of(&presented);
        let allowed = match scope {
            Scope::Push => push,
            Scope::Read => read,
        };
        if allowed {
            Ok(())
        } else if push || read {
            Err(AppError::Forbidden(format!(
                "this token may not {}",
                match scope {
                    Scope::Push => "push runs",
                    Scope::Read => "read this server",
                }
            )))
        } else {
            Err(AppError::Unauthorized)
        }
    }
}

/// The secret of `Authorization: Bearer SECRET` or the password of `Authorization: Basic`.
fn presented_secret(headers: &HeaderMap) -> Option<String> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = value.trim().split_once(' ')?;
    let rest = rest.trim();
    if scheme.eq_ignore_ascii_case("bearer") {
        return Some(rest.to_owned());
    }
    if scheme.eq_ignore_ascii_case("basic") {
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(rest)
            .ok()?;
        let text = String::from_utf8(decoded).ok()?;
        let (_, password) = text.split_once(':')?;
        return Some(password.to_owned());
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const PUSH: &str = "push-secret-0123456789";
    const READ: &str = "read-secret-0123456789";

    fn auth(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_str(value).unwrap());
        h
    }

    fn status(r: Result<(), AppError>) -> u16 {
        r.map_or_else(|e| e.public().status.as_u16(), |()| 200)
    }

    #[test]
    fn token_matches_only_itself() {
        let t = Token::new("s3cret");
        assert!(t.matches("s3cret"));
        assert!(!t.matches("s3cre"));
        assert!(!t.matches("s3cret "));
        assert!(!t.matches(""));
        assert_eq!(format!("{t:?}"), "Token(<redacted>)");
    }

    #[test]
    fn specs_name_a_scope_and_a_strong_secret() {
        assert_eq!(
            parse_spec(&format!("push:{PUSH}")),
            Ok((Scope::Push, PUSH.to_owned()))
        );
        assert_eq!(
            parse_spec(&format!("read:{READ}")).map(|(s, _)| s),
            Ok(Scope::Read)
        );
        let err = parse_spec("admin:0123456789abcdefgh").unwrap_err();
        assert!(!err.to_string().contains("0123456789"), "{err}");
        assert!(matches!(
            parse_spec("push:short"),
            Err(SpecError::WeakSecret { .. })
        ));
        assert!(matches!(
            parse_spec("push:has a space in the secret"),
            Err(SpecError::WeakSecret { .. })
        ));
        assert!(matches!(parse_spec(PUSH), Err(SpecError::Malformed(_))));
    }

    #[test]
    fn each_token_does_what_its_scope_allows() {
        let access = Access::open()
            .with_token(Scope::Push, PUSH)
            .with_token(Scope::Read, READ)
            .private(true);
        let bearer = |s: &str| auth(&format!("Bearer {s}"));
        assert_eq!(status(access.check(&bearer(PUSH), Scope::Push)), 200);
        assert_eq!(status(access.check(&bearer(READ), Scope::Push)), 403);
        assert_eq!(status(access.check(&bearer(READ), Scope::Read)), 200);
        assert_eq!(status(access.check(&bearer(PUSH), Scope::Read)), 403);
        assert_eq!(status(access.check(&bearer("wrong"), Scope::Read)), 401);
        assert_eq!(status(access.check(&HeaderMap::new(), Scope::Read)), 401);
        assert_eq!(status(access.check(&HeaderMap::new(), Scope::Push)), 401);
        // Browsers: the password of Basic authentication.
        let basic = base64::engine::general_purpose::STANDARD.encode(format!("me:{READ}"));
        assert_eq!(
            status(access.check(&auth(&format!("Basic {basic}")), Scope::Read)),
            200
        );
        assert_eq!(status(access.check(&auth("Basic !!!"), Scope::Read)), 401);
    }

    #[test]
    fn an_open_server_reads_freely_and_pushes_only_with_a_push_token() {
        let open = Access::open();
        assert_eq!(status(open.check(&HeaderMap::new(), Scope::Read)), 200);
        assert_eq!(
            status(open.check(&auth(&format!("Bearer {PUSH}")), Scope::Push)),
            403
        );
        let ingest = Access::open().with_token(Scope::Push, PUSH);
        assert_eq!(status(ingest.check(&HeaderMap::new(), Scope::Read)), 200);
        assert_eq!(status(ingest.check(&HeaderMap::new(), Scope::Push)), 401);
    }
}
