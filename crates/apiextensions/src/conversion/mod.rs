//! Conversion of custom objects between the versions of a CRD whose
//! `spec.conversion.strategy` is `Webhook`: kube-apiserver's
//! `webhookConverter` (apiextensions-apiserver
//! `pkg/apiserver/conversion/webhook_converter.go`). `conversion: None`
//! needs no call (only `apiVersion` changes) and stays with the callers.

pub mod webhook;

pub use webhook::{ConversionError, WebhookConverter};
