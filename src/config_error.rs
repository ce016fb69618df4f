//! The error every option check returns, at the bottom of the layers so
//! that policies, URLs and the pool's options can all name a bad field
//! without depending on the configuration that gathers them.

/// A configuration value that cannot be used. `field` is the option path.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid option `{field}`: {reason}")]
pub struct ConfigError {
    field: String,
    reason: String,
}

impl ConfigError {
    /// An error about option `field`.
    pub fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        ConfigError { field: field.into(), reason: reason.into() }
    }

    /// The option path, e.g. `maxDelayMs` or `upstreams[2]`.
    pub fn field(&self) -> &str {
        &self.field
    }

    /// What is wrong with it.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}
