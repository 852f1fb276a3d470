//! Tests of the access reviews.
