// The verbs vocabulary shared by host programs and the HCA model (IBA vol 1 ch. 11, as libibverbs names it):
// queue-pair types and states, work requests, work completions and their statuses, and QP attributes. Plain data,
// no behaviour.
#pragma once

#include <cstdint>
#include <string_view>

namespace ib::verbs {

enum class QpType : std::uint8_t { rc, uc, ud };
enum class QpState : std::uint8_t { reset, init, rtr, rts, error };

enum class WrOpcode : std::uint8_t {
  send,
  send_with_imm,
  rdma_write,
  rdma_write_with_imm,
  rdma_read,
  atomic_cmp_and_swp,
  atomic_fetch_and_add,
};

/// Completion statuses (ibv_wc_status), those the model can produce.
enum class WcStatus : std::uint8_t {
  success,
  loc_len_err,       ///< a receive buffer too small for the incoming message
  loc_qp_op_err,     ///< an operation the QP cannot do (e.g. a UD message above the MTU)
  wr_flush_err,      ///< flushed because the QP went to the error state
  rem_inv_req_err,   ///< the responder found the request invalid (too long for its receive buffer)
  rem_access_err,    ///< the responder's memory check failed
  retry_exc_err,     ///< transport retries (timeouts, NAKs) exhausted
  rnr_retry_exc_err, ///< receiver-not-ready retries exhausted
};

enum class WcOpcode : std::uint8_t { send, rdma_write, rdma_read, comp_swap, fetch_add, recv, recv_rdma_with_imm };

/// Path MTUs (IBA's enumeration 1..5 = 256..4096 bytes).
enum class Mtu : std::uint16_t { mtu256 = 256, mtu512 = 512, mtu1024 = 1024, mtu2048 = 2048, mtu4096 = 4096 };

/// Where a UD datagram goes (an address handle).
struct AddressHandle {
  std::uint16_t dlid = 0;
  std::uint8_t sl = 0;
  std::uint8_t port = 1;
};

/// One work request as posted (ibv_send_wr with one scatter/gather entry). Wide fields first: every send queue entry
/// holds one (docs/models/hca.md, "Memory per QP").
struct SendWr {
  std::uint64_t wr_id = 0;
  std::uint64_t local_address = 0;  ///< one scatter/gather entry
  std::uint64_t remote_address = 0; ///< RDMA and atomics
  std::uint64_t compare_add = 0;    ///< atomics: the compare value (CAS) or the addend (FAA)
  std::uint64_t swap = 0;           ///< CAS: the swap value
  std::uint32_t length_bytes = 0;
  std::uint32_t immediate = 0;   ///< *_with_imm
  std::uint32_t remote_qpn = 0;  ///< UD only
  std::uint32_t remote_qkey = 0; ///< UD only
  AddressHandle ah;              ///< UD only
  WrOpcode opcode = WrOpcode::send;
  bool signaled = true;     ///< IBV_SEND_SIGNALED (QPs are created with sq_sig_all = 0)
  bool inline_data = false; ///< IBV_SEND_INLINE: the payload is copied into the WQE at post time
};

struct RecvWr {
  std::uint64_t wr_id = 0;
  std::uint64_t address = 0;
  std::uint32_t length_bytes = 0;
};

struct WorkCompletion {
  std::uint64_t wr_id = 0;
  WcStatus status = WcStatus::success;
  WcOpcode opcode = WcOpcode::send;
  std::uint32_t byte_len = 0; ///< receives: bytes placed (UD: payload + 40 bytes of GRH space)
  std::uint32_t qp_num = 0;
  std::uint32_t src_qp = 0; ///< UD receives
  std::uint16_t slid = 0;   ///< receives
  bool with_imm = false;
  std::uint32_t immediate = 0;
};

/// QpCaps::srq of a QP with its own receive queue.
inline constexpr std::uint32_t no_srq = 0xffffffffu;

struct QpCaps {
  std::uint32_t max_send_wr = 128;
  std::uint32_t max_recv_wr = 128; ///< ignored with an SRQ
  std::uint32_t srq = no_srq;      ///< the shared receive queue it takes RECV WQEs from (Hca::create_srq)
  std::uint32_t max_inline_data = 0;
  /// The driver copies a lone WQE that fits the BlueFlame buffer through write-combining MMIO instead of ringing
  /// the doorbell (mlx5 does so per QP; MLX5_SHUT_UP_BF=1 turns it off).
  bool blueflame = true;
  /// RC: out-of-order data placement (mlx5dv's MLX5DV_QP_CREATE_OOO_DP, ConnectX-5 on): packets that adaptive
  /// routing delivers ahead of a missing PSN are taken, not answered by a sequence NAK; completions stay in order.
  bool out_of_order = false;
};

/// The attributes modify_qp sets on the way to RTS (ibv_qp_attr), as perftest sets them. Wide fields first: a run
/// may hold a million of these (docs/performance.md).
struct QpAttr {
  std::uint32_t qkey = 0;      ///< UD
  std::uint32_t dest_qpn = 0;  ///< RTR, RC/UC
  std::uint32_t rq_psn = 0;    ///< RTR: first PSN expected
  std::uint32_t sq_psn = 0;    ///< RTS: first PSN sent
  std::uint16_t dest_lid = 0;  ///< RTR, RC/UC
  Mtu path_mtu = Mtu::mtu4096; ///< RTR (UD: the port's MTU)
  std::uint8_t port = 1;
  std::uint8_t sl = 0;                  ///< RTR, RC/UC
  std::uint8_t min_rnr_timer = 12;      ///< RTR, RC: encoded RNR NAK timer this QP asks senders to wait (12 = 0.64 ms)
  std::uint8_t max_dest_rd_atomic = 16; ///< RTR, RC: responder resources
  std::uint8_t timeout = 14;            ///< RTS, RC: local ACK timeout 4.096 us x 2^timeout (0 = infinite)
  std::uint8_t retry_cnt = 7;           ///< RTS, RC
  std::uint8_t rnr_retry = 7;           ///< RTS, RC: 7 = retry forever
  std::uint8_t max_rd_atomic = 16;      ///< RTS, RC: initiator depth
};

/// Why post_send or post_recv refused a list (the errno verbs would return) and which WR it stopped at.
enum class PostError : std::uint8_t {
  none,
  invalid_state, ///< EINVAL: the QP is not in a state that accepts the post (RTS for sends, not RESET for recvs)
  invalid_wr,    ///< EINVAL: inline data above max_inline_data, an opcode the QP type lacks, a UD datagram > MTU
  queue_full,    ///< ENOMEM: the queue has no free entry (unsignaled WRs are freed only by a later completion)
};
struct PostResult {
  PostError error = PostError::none;
  std::uint32_t bad_wr = 0; ///< index of the first WR not posted
  bool ok() const { return error == PostError::none; }
};

std::string_view to_string(WcStatus status);
std::string_view to_string(WcOpcode opcode);
std::string_view to_string(PostError error);
std::string_view to_string(QpType type);

} // namespace ib::verbs
