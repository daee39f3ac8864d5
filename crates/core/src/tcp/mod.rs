//! TCP (being written).
