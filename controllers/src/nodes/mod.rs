//! Simulated nodes, as kwok simulates them: registered Nodes with heartbeats, and their pods run through
//! their phases.
