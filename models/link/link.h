// The IB link layer's public header (STYLE rule 2): other models include only this. It gathers the link layer's
// pieces, each tested on its own: data rates of every width and speed (link_rate.h), packet wire sizes from the
// IBA headers (packet_format.h), the pooled packet (packet.h), per-VL credit flow control (credit_flow.h), VL
// arbitration (vl_arbiter.h), the default SL -> VL mapping (sl_to_vl.h), and the Port that serializes, propagates and
// exchanges flow-control packets with them (port.h), which switches and HCAs own one per physical port.
#pragma once

#include "models/link/cable.h"
#include "models/link/credit_flow.h"
#include "models/link/link_rate.h"
#include "models/link/packet.h"
#include "models/link/packet_format.h"
#include "models/link/port.h"
#include "models/link/sl_to_vl.h"
#include "models/link/vl_arbiter.h"
