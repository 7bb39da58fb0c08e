//! Adapters: tool output -> the result model.
