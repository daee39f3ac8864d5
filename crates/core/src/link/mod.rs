//! Link models (being written).
