//! Extractors whose rejections are [`AppError`]s, so a malformed request gets the app's 400 page
//! (or JSON error) with a message instead of axum's plain-text default.

use crate::error::AppError;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use std::str::FromStr;

/// Query parameters deserialized into `T` (use `Option<String>` fields and parse them with
/// [`parse_param`] for precise messages).
#[derive(Debug, Clone, Default)]
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or_default();
        serde_urlencoded::from_str(query)
            .map(Query)
            .map_err(|e| AppError::BadRequest(format!("malformed query string: {e}")))
    }
}

/// Path parameters deserialized into `T`.
#[derive(Debug, Clone)]
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Path(value))
            .map_err(|e| AppError::BadRequest(format!("malformed path: {}", e.body_text())))
    }
}

/// A trimmed, non-empty parameter value.
#[must_use]
pub fn non_empty(value: Option<&String>) -> Option<&str> {
    value.map(|v| v.trim()).filter(|v| !v.is_empty())
}

/// Parses an optional parameter; empty counts as absent.
///
/// # Errors
/// [`AppError::BadRequest`] naming the parameter and what was expected.
pub fn parse_param<T: FromStr>(
    name: &str,
    value: Option<&String>,
    expected: &str,
) -> Result<Option<T>, AppError> {
    non_empty(value)
        .map(|v| {
            v.parse::<T>().map_err(|_| {
                AppError::BadRequest(format!("parameter {name} must be {expected}, got {v:?}"))
            })
        })
        .transpose()
}

/// The client's address, when the request came through [`crate::serve`] (or
/// `axum::serve` with connect info); `None` for in-process requests.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub Option<std::net::IpAddr>);

impl Peer {
    /// The address recorded in a request's extensions.
    #[must_use]
    pub fn of(extensions: &axum::http::Extensions) -> Option<std::net::IpAddr> {
        extensions
            .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
            .map(|c| c.0.ip())
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Peer {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(Self::of(&parts.extensions)))
    }
}
