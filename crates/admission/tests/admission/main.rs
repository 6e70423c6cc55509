//! Admission as a client sees it: exact status codes, messages, warnings
//! and admitted objects.

mod decode;
mod defaults;
mod lifecycle;
mod support;
mod validate;
