//! Network (being written).
