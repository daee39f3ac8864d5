//! Event engine (being written).
