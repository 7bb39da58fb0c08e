//! The one error type of the app and how it becomes a response.
//!
//! | variant | status | shown to the client |
//! |---|---|---|
//! | [`AppError::NotFound`] | 404 | the message (unknown run, suite, page) |
//! | [`AppError::BadRequest`] | 400 | the message (malformed parameters or body) |
//! | [`AppError::Unauthorized`] | 401 | a fixed sentence, with `WWW-Authenticate: Bearer` |
//! | [`AppError::IngestDisabled`] | 403 | a fixed sentence |
//! | [`AppError::Forbidden`] | 403 | what the token may not do |
//! | [`AppError::Ledger`] (`KeyReused`), [`AppError::Refused`] | 409 | the message |
//! | [`AppError::PayloadTooLarge`], [`AppError::Ledger`] (an artifact over the cap) | 413 | the limit |
//! | [`AppError::Ledger`] (`Invalid`, another refused artifact) | 400 | the message |
//! | [`AppError::Internal`], [`AppError::Ledger`] (most) | 500 | a generic sentence; the details are logged |
//!
//! Pages get an HTML error page; the JSON API (see [`crate::api`]) turns the same errors into
//! `{"error": {"status": ..., "message": ...}}` through the [`PublicError`] extension every
//! error response carries.

use askama::Template;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use bench_git::MergeBaseError;
use bench_model::ArtifactError;
use bench_store::LedgerError;
use bench_verdicts::refs::RefError;

/// Everything a handler can fail with.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// An unknown run, suite, machine or page.
    #[error("{0}")]
    NotFound(String),
    /// Malformed query parameters, path or body.
    #[error("{0}")]
    BadRequest(String),
    /// No token where one is needed.
    #[error("a valid token is required (Authorization: Bearer TOKEN)")]
    Unauthorized,
    /// A token that matches none (counted against the client's address, see
    /// [`crate::limits::AuthThrottle`]).
    #[error("a valid token is required (Authorization: Bearer TOKEN)")]
    WrongToken,
    /// A valid token of another scope.
    #[error("{0}")]
    Forbidden(String),
    /// Ingest is not enabled on this server.
    #[error("ingest is disabled on this server (start bench-web with --token push:SECRET)")]
    IngestDisabled,
    /// A request body over the limit.
    #[error("request body exceeds {0} bytes")]
    PayloadTooLarge(usize),
    /// A request body that did not arrive in time.
    #[error("the request body did not arrive within {0} s")]
    BodyTimeout(u64),
    /// Too many requests of a kind at once, or too many failed logins: try again later.
    #[error("{message}")]
    TooManyRequests {
        /// Why, and when to retry.
        message: String,
        /// Seconds until a retry may succeed (the `Retry-After` header).
        retry_after_s: u64,
    },
    /// A use case refused the request as `bench-run` refuses it (exit 2): two runs of
    /// different suites, say. The message says why and how to ask anyway.
    #[error("{0}")]
    Refused(String),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// Anything else that is the server's fault.
    #[error("{0}")]
    Internal(String),
}

impl From<RefError> for AppError {
    fn from(e: RefError) -> Self {
        match e {
            RefError::NotFound { .. }
            | RefError::NoRunAtMergeBase { .. }
            | RefError::MergeBase(MergeBaseError::UnknownRevision { .. }) => {
                Self::NotFound(e.to_string())
            }
            // The server's own directory is not for clients to see.
            RefError::MergeBase(
                MergeBaseError::NotARepository { .. } | MergeBaseError::NoRepository { .. },
            ) => Self::BadRequest(
                "merge-base: references are resolved in the server's git repository, and it \
                 has none"
                    .to_owned(),
            ),
            RefError::MergeBase(MergeBaseError::Git { .. }) => Self::Internal(e.to_string()),
            RefError::MergeBase(_) => Self::BadRequest(e.to_string()),
            RefError::Ledger(e) => Self::Ledger(e),
        }
    }
}

impl From<askama::Error> for AppError {
    fn from(e: askama::Error) -> Self {
        Self::Internal(format!("template rendering failed: {e}"))
    }
}

/// What a client may see of an error: its status and a message without internals. Attached to
/// every error response as an extension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicError {
    /// The status.
    pub status: StatusCode,
    /// The message.
    pub message: String,
}

const GENERIC_INTERNAL: &str =
    "Something went wrong on the server. The error was logged; please try again later.";

impl AppError {
    /// The status code and the message a client may see.
    #[must_use]
    pub fn public(&self) -> PublicError {
        let (status, message) = match self {
            Self::NotFound(m) => (StatusCode::NOT_FOUND, m.clone()),
            Self::BadRequest(m) => (StatusCode::BAD_REQUEST, m.clone()),
            Self::Unauthorized | Self::WrongToken => (StatusCode::UNAUTHORIZED, self.to_string()),
            Self::IngestDisabled => (StatusCode::FORBIDDEN, self.to_string()),
            Self::Forbidden(m) => (StatusCode::FORBIDDEN, m.clone()),
            Self::Refused(m) => (StatusCode::CONFLICT, m.clone()),
            Self::Ledger(LedgerError::KeyReused { .. }) => (StatusCode::CONFLICT, self.to_string()),
            Self::PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, self.to_string()),
            Self::BodyTimeout(_) => (StatusCode::REQUEST_TIMEOUT, self.to_string()),
            Self::TooManyRequests { message, .. } => {
                (StatusCode::TOO_MANY_REQUESTS, message.clone())
            }
            Self::Ledger(LedgerError::NoSuchRun(_)) => (StatusCode::NOT_FOUND, self.to_string()),
            // The ledger's own validation messages (duplicate results, empty runs) are meant
            // for users.
            Self::Ledger(LedgerError::Invalid(m)) => (StatusCode::BAD_REQUEST, m.clone()),
            Self::Ledger(LedgerError::Artifact(e @ ArtifactError::TooLarge { .. })) => {
                (StatusCode::PAYLOAD_TOO_LARGE, e.to_string())
            }
            Self::Ledger(LedgerError::Artifact(e)) => (StatusCode::BAD_REQUEST, e.to_string()),
            Self::Ledger(_) | Self::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                GENERIC_INTERNAL.to_owned(),
            ),
        };
        PublicError { status, message }
    }
}

/// The HTML error page.
#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    status: u16,
    reason: &'a str,
    message: &'a str,
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let public = self.public();
        if public.status.is_server_error() {
            tracing::error!(error = %self, "internal error");
        } else {
            tracing::debug!(status = %public.status, error = %self, "client error");
        }
        let page = ErrorPage {
            status: public.status.as_u16(),
            reason: public.status.canonical_reason().unwrap_or("Error"),
            message: &public.message,
        };
        let body = page.render().unwrap_or_else(|e| {
            tracing::error!(error = %e, "error page rendering failed");
            String::from("<!doctype html><title>Error</title><p>Error</p>")
        });
        let mut response = (public.status, Html(body)).into_response();
        if let Self::TooManyRequests { retry_after_s, .. } = &self {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_s));
        }
        if public.status == StatusCode::UNAUTHORIZED {
            // Scripts send a bearer token; a browser asks for Basic credentials.
            let headers = response.headers_mut();
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"bench-web\""),
            );
            headers.append(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"bench-web\", charset=\"UTF-8\""),
            );
        }
        response.extensions_mut().insert(public);
        response
    }
}
