//! Keelson's authentication and authorization, kube-apiserver's
//! `authentication` and `authorization` layers without HTTP:
//!
//! - [`user`]: who a request comes from (`user.Info`), the well-known
//!   users and groups;
//! - [`authn`]: x509 client certificates (CN → user, O → groups) and the
//!   static token file (`--token-auth-file`);
//! - [`serviceaccount`]: ServiceAccount JWTs (TokenRequest), their keys,
//!   issuer discovery and verification;
//! - [`attributes`]: what a request asks to do and kube's `403` wording;
//! - [`rbac`]: the RBAC authorizer over an index fed by the store's change
//!   stream, rule matching, escalation checks; [`rbac::Authorizer`] is
//!   `--authorization-mode` (RBAC or AlwaysAllow, `system:masters` first);
//! - [`bootstrap`]: kube's bootstrap ClusterRoles and bindings, as data.
#![forbid(unsafe_code)]

pub mod attributes;
pub mod audiences;
pub mod authn;
pub mod bootstrap;
pub mod csr;
pub mod keyutil;
pub mod rbac;
pub mod serviceaccount;
pub mod user;

pub use attributes::{Attributes, Decision};
pub use rbac::{Authorizer, Mode, Rbac};
pub use user::UserInfo;
