// The IB link layer's public header (STYLE rule 2): other models include only this. So far it gathers the link
// layer's building blocks, each tested on its own: data rates of every width and speed (link_rate.h), packet wire
// sizes from the IBA headers (packet_format.h), per-VL credit flow control (credit_flow.h) and VL arbitration
// (vl_arbiter.h). The Link component that serializes, propagates and exchanges flow-control packets with them
// comes next (issue 5); it will be declared here.
#pragma once

#include "models/link/credit_flow.h"
#include "models/link/link_rate.h"
#include "models/link/packet_format.h"
#include "models/link/vl_arbiter.h"
