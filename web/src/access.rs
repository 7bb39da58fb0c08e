//! Who may do what: bearer tokens, each with one scope.
//!
//! | scope | allows |
//! |---|---|
//! | `push` | `POST /api/runs`, `/api/pairs`, `/api/runs/{id}/artifacts` (ingest) |
//! | `read` | every page and `GET /api/...`, when the server is private |
//!
//! A server has any number of tokens (`--token push:SECRET`, `--tokens-file`, the older
//! `--ingest-token SECRET` is a push token). A token may carry a name, `NAME=push:SECRET`
//! (letters, digits, `.`, `_`, `-`); unnamed ones are called `push#1`, `read#2`, ... by their
//! place. The server logs every accepted push with its token's name, never its secret.
//!
//! A token may be limited to one project: `push:PROJECT:SECRET`, `read:PROJECT:SECRET`
//! (`push:*:SECRET` or `push:SECRET`: every project). It then does nothing in another project
//! (403). A secret holding `:` must be given with its project (`push:*:a:b...`), or its first
//! part would be read as a project name. Reads are open to anyone unless the server is
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
use bench_model::Project;
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
    #[error("a token is [NAME=]SCOPE:SECRET with SCOPE push or read, got {0:?}")]
    Malformed(String),
    /// A name with characters other than letters, digits, `.`, `_` and `-`.
    #[error("a token's name is letters, digits, `.`, `_` and `-`, got {0:?}")]
    BadName(String),
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

/// A token as configured: its name, scope, project and secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// Its name, when given (`NAME=SCOPE:SECRET`).
    pub name: Option<String>,
    /// What it allows.
    pub scope: Scope,
    /// The only project it may be used in; `None`: every project.
    pub project: Option<Project>,
    /// The secret.
    pub secret: String,
}

/// Parses `[NAME=]SCOPE:SECRET` (the secret redacted from every error).
///
/// # Errors
/// See [`SpecError`].
pub fn parse_spec(spec: &str) -> Result<Spec, SpecError> {
    let (name, rest) = match (spec.find('='), spec.find(':')) {
        (Some(eq), Some(colon)) if eq < colon => (Some(&spec[..eq]), &spec[eq + 1..]),
        _ => (None, spec),
    };
    if let Some(name) = name
        && (name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(SpecError::BadName(name.to_owned()));
    }
    let (scope, secret) = rest
        .split_once(':')
        .ok_or_else(|| SpecError::Malformed(redact(rest)))?;
    let (project, secret) = match secret.split_once(':') {
        Some(("*", secret)) => (None, secret),
        Some((name, secret)) => match Project::new(name) {
            Ok(project) => (Some(project), secret),
            Err(_) => (None, &rest[rest.find(':').map_or(0, |i| i + 1)..]),
        },
        None => (None, secret),
    };
    let scope = match scope.trim() {
        "push" => Scope::Push,
        "read" => Scope::Read,
        _ => return Err(SpecError::Malformed(redact(rest))),
    };
    check_secret(scope, secret)?;
    Ok(Spec {
        name: name.map(str::to_owned),
        scope,
        project,
        secret: secret.to_owned(),
    })
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
    tokens: Vec<Configured>,
    private: bool,
}

/// One configured token.
#[derive(Debug)]
struct Configured {
    scope: Scope,
    token: Token,
    name: String,
    /// `None`: every project.
    project: Option<Project>,
}

impl Access {
    /// No tokens: reads open, ingest disabled.
    #[must_use]
    pub fn open() -> Self {
        Self::default()
    }

    /// Adds a token for every project, named by its place (`push#1`).
    #[must_use]
    pub fn with_token(self, scope: Scope, secret: &str) -> Self {
        self.with_spec(&Spec {
            name: None,
            scope,
            project: None,
            secret: secret.to_owned(),
        })
    }

    /// Adds a token called `name` in the log, for every project.
    #[must_use]
    pub fn with_named_token(self, name: &str, scope: Scope, secret: &str) -> Self {
        self.with_spec(&Spec {
            name: Some(name.to_owned()),
            scope,
            project: None,
            secret: secret.to_owned(),
        })
    }

    /// Adds a parsed token.
    #[must_use]
    pub fn with_spec(mut self, spec: &Spec) -> Self {
        let name = spec
            .name
            .clone()
            .unwrap_or_else(|| format!("{}#{}", spec.scope.name(), self.tokens.len() + 1));
        self.tokens.push(Configured {
            scope: spec.scope,
            token: Token::new(&spec.secret),
            name,
            project: spec.project.clone(),
        });
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
        self.tokens.iter().any(|t| t.scope == Scope::Push)
    }

    /// Whether some token may read.
    #[must_use]
    pub fn has_read_token(&self) -> bool {
        self.tokens.iter().any(|t| t.scope == Scope::Read)
    }

    /// Whether `presented` matches some token, and the name of the first that allows
    /// `wanted` in `project` (every token is compared, whichever matches).
    fn matching(&self, presented: &str, wanted: Scope, project: &Project) -> (bool, Option<&str>) {
        let (mut any, mut name) = (false, None);
        for t in &self.tokens {
            let hit = t.token.matches(presented);
            any |= hit;
            let allows = t.scope == wanted && t.project.as_ref().is_none_or(|p| p == project);
            if hit && allows && name.is_none() {
                name = Some(t.name.as_str());
            }
        }
        (any, name)
    }

    /// Whether the request with `headers` may do what `scope` allows (module docs); the name
    /// of the token that allows it, when one was needed.
    ///
    /// # Errors
    /// [`AppError::IngestDisabled`], [`AppError::Unauthorized`] or [`AppError::Forbidden`].
    pub fn check(&self, headers: &HeaderMap, scope: Scope) -> Result<Option<&str>, AppError> {
        match scope {
            Scope::Push if !self.ingest_enabled() => return Err(AppError::IngestDisabled),
            Scope::Read if !self.private => return Ok(None),
            _ => {}
        }
        let presented = presented_secret(headers).ok_or(AppError::Unauthorized)?;
        let project = crate::project::current();
        let (any, name) = self.matching(&presented, scope, &project);
        if name.is_some() {
            Ok(name)
        } else if any {
            Err(AppError::Forbidden(format!(
                "this token may not {} project {project}",
                match scope {
                    Scope::Push => "push runs to",
                    Scope::Read => "read",
                }
            )))
        } else {
            Err(AppError::WrongToken)
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

    fn status(r: Result<Option<&str>, AppError>) -> u16 {
        r.map_or_else(|e| e.public().status.as_u16(), |_| 200)
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
            Ok(Spec {
                name: None,
                scope: Scope::Push,
                project: None,
                secret: PUSH.to_owned()
            })
        );
        assert_eq!(
            parse_spec(&format!("read:{READ}")).map(|s| s.scope),
            Ok(Scope::Read)
        );
        // A name before `=`; an `=` inside the secret is the secret's.
        let named = parse_spec("ci-runners=push:abc=def=0123456789").unwrap();
        assert_eq!(named.name.as_deref(), Some("ci-runners"));
        assert_eq!(named.secret, "abc=def=0123456789");
        assert_eq!(parse_spec("push:abc=def=0123456789").unwrap().name, None);
        assert!(matches!(
            parse_spec("bad name=push:0123456789abcdefgh"),
            Err(SpecError::BadName(_))
        ));
        // A project between scope and secret; `*` for every project.
        let scoped = parse_spec("push:quick-xml:0123456789abcdefgh").unwrap();
        assert_eq!(scoped.project.unwrap().as_str(), "quick-xml");
        assert_eq!(scoped.secret, "0123456789abcdefgh");
        let every = parse_spec("push:*:0123:456789abcdefgh").unwrap();
        assert_eq!(
            (every.project, every.secret.as_str()),
            (None, "0123:456789abcdefgh")
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
        assert_eq!(
            access.check(&bearer(PUSH), Scope::Push).unwrap(),
            Some("push#1")
        );
        let named = Access::open().with_named_token("runners", Scope::Push, PUSH);
        assert_eq!(
            named.check(&bearer(PUSH), Scope::Push).unwrap(),
            Some("runners")
        );
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
