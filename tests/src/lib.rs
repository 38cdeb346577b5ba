//! test support
pub mod mock_model;
