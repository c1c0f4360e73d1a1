#include "models/hca/verbs.h"

namespace ib::verbs {

std::string_view to_string(WcStatus status) {
  switch (status) {
  case WcStatus::success:
    return "success";
  case WcStatus::loc_len_err:
    return "local length error";
  case WcStatus::loc_qp_op_err:
    return "local QP operation error";
  case WcStatus::wr_flush_err:
    return "work request flushed error";
  case WcStatus::rem_inv_req_err:
    return "remote invalid request error";
  case WcStatus::rem_access_err:
    return "remote access error";
  case WcStatus::retry_exc_err:
    return "transport retry counter exceeded";
  case WcStatus::rnr_retry_exc_err:
    return "RNR retry counter exceeded";
  }
  return "?";
}

std::string_view to_string(WcOpcode opcode) {
  switch (opcode) {
  case WcOpcode::send:
    return "SEND";
  case WcOpcode::rdma_write:
    return "RDMA_WRITE";
  case WcOpcode::rdma_read:
    return "RDMA_READ";
  case WcOpcode::comp_swap:
    return "COMP_SWAP";
  case WcOpcode::fetch_add:
    return "FETCH_ADD";
  case WcOpcode::recv:
    return "RECV";
  case WcOpcode::recv_rdma_with_imm:
    return "RECV_RDMA_WITH_IMM";
  }
  return "?";
}

std::string_view to_string(PostError error) {
  switch (error) {
  case PostError::none:
    return "ok";
  case PostError::invalid_state:
    return "EINVAL (QP state)";
  case PostError::invalid_wr:
    return "EINVAL (work request)";
  case PostError::queue_full:
    return "ENOMEM (queue full)";
  }
  return "?";
}

std::string_view to_string(QpType type) {
  switch (type) {
  case QpType::rc:
    return "RC";
  case QpType::uc:
    return "UC";
  case QpType::ud:
    return "UD";
  }
  return "?";
}

} // namespace ib::verbs
