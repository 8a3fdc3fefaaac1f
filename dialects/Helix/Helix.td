//===- Helix.td - All helix dialect definitions ------------*- tablegen -*-===//
include "HelixDialect.td"
include "HelixAttributes.td"
include "HelixTypes.td"
include "HelixOps.td"
include "HelixShardingOps.td"
