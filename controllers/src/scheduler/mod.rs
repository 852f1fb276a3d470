//! The scheduler (kube-scheduler 1.32's default profile): binds pending pods to nodes.
