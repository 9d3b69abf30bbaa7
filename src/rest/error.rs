use std::fmt;

/// Every failure the client reports. (Filled out by the REST layer.)
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// Bytes that could not be decoded as the expected JSON.
    Decode {
        /// What went wrong.
        message: String,
        /// A short excerpt of the offending input.
        excerpt: String,
    },
}

impl Error {
    /// A decode error with a bounded excerpt of `input` (never panics on
    /// non-UTF-8 or short input).
    pub fn decode(message: impl Into<String>, input: &[u8]) -> Self {
        const MAX: usize = 120;
        let cut = input.len().min(MAX);
        let mut excerpt = String::from_utf8_lossy(&input[..cut]).into_owned();
        if input.len() > MAX {
            excerpt.push('…');
        }
        Error::Decode {
            message: message.into(),
            excerpt,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Decode { message, excerpt } => {
                write!(f, "decode error: {message} (input: {excerpt:?})")
            }
        }
    }
}

impl std::error::Error for Error {}
