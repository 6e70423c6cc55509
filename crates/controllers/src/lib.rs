//! Keelson's controllers: loops that watch the store's change stream and
//! write through [`keelson_api::StoreApi`] until the world matches what the
//! objects ask for, as kube-controller-manager's do.
//!
//! They hold a `StoreApi` and nothing else, so the same code runs inside
//! the embedded `keelson` binary (the local store) and in the
//! `keelson-controllers` process (a gRPC client of `keelson-store`).
//!
//! - [`NamespaceController`]: deleting a namespace deletes every object in
//!   it.
//! - [`GarbageCollector`]: owner references — background, foreground and
//!   orphan cascading deletion.
//! - [`CrdController`]: CustomResourceDefinition names, conditions and the
//!   cleanup of a deleted CRD's objects.
//! - [`bootstrap`]: kube's bootstrap RBAC policy, reconciled on start
//!   ([`bootstrap::reconcile_policy`], also as [`BootstrapController`]),
//!   and the `kubernetes` Service, Endpoints and EndpointSlice
//!   ([`bootstrap::apiserver_objects`]), and kube's API Priority and
//!   Fairness bootstrap FlowSchemas and PriorityLevelConfigurations with
//!   the FlowSchemas' `Dangling` conditions ([`bootstrap::flowcontrol`]);
//!   the gateway runs them as it starts, as kube-apiserver's post-start
//!   hooks do.
//! - [`AggregationController`]: ClusterRole `aggregationRule`s.
//! - [`ServiceAccountController`]: a `default` ServiceAccount in every
//!   namespace; [`RootCaController`]: `kube-root-ca.crt` in every namespace.
//! - [`TokensController`]: legacy ServiceAccount tokens in
//!   `kubernetes.io/service-account-token` Secrets (run by the gateway,
//!   which holds the signing key).
//! - [`DisruptionController`]: PodDisruptionBudget status (the budgets the
//!   eviction subresource checks).
//! - [`ResourceQuotaController`]: ResourceQuota `status.hard` and
//!   `status.used` (measured with ResourceQuota admission's evaluators).
//! - [`service_alloc`]: Service cluster IPs (IPAddress objects) and node
//!   ports, allocated by the gateway's write path and released wherever a
//!   Service is deleted.
#![forbid(unsafe_code)]

pub mod bootstrap;
pub mod crd;
pub mod disruption;
pub mod gc;
pub mod namespace;
mod per_namespace;
pub mod rbac_aggregation;
pub mod resource_quota;
pub mod rootca;
pub mod sa_tokens;
pub mod service_alloc;
pub mod serviceaccount;

pub use bootstrap::BootstrapController;
pub use crd::CrdController;
pub use disruption::DisruptionController;
pub use gc::GarbageCollector;
pub use namespace::NamespaceController;
pub use rbac_aggregation::AggregationController;
pub use resource_quota::ResourceQuotaController;
pub use rootca::RootCaController;
pub use sa_tokens::TokensController;
pub use serviceaccount::ServiceAccountController;
