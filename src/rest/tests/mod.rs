//! Behaviour tests of the REST layer that span several files (the watch
//! path end to end, the client's retry and auth decisions on a fake clock).
mod client_tests;
mod decode_props;
mod error_tests;
mod gate_tests;
mod json_text_tests;
mod warning_tests;
mod watch_tests;
