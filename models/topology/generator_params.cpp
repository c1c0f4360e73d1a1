// The generators' parameters, in one table shared by topology files ("generator" blocks) and `ibnetsim topo gen`,
// and the strict reading of a generator block.
#include <limits>

#include "models/topology/generators.h"

namespace ib::topo {

namespace {

std::vector<GeneratorParam> with_common(std::vector<GeneratorParam> own) {
  const std::vector<GeneratorParam> common = {
      {"switch_profile", ParamKind::text, true, "switch-ib2-edr", "switch hardware profile (topologies/hardware)"},
      {"hca_profile", ParamKind::text, true, "connectx4-edr", "host (HCA) hardware profile"},
      {"width", ParamKind::width, false, "", "link width; default: the widest both profiles support"},
      {"speed", ParamKind::speed, false, "", "link speed; default: the fastest both profiles support"},
      {"host_length_m", ParamKind::length_m, true, "2", "length of host-to-switch cables, metres"},
      {"host_cable", ParamKind::text, true, "copper-dac", "cable profile of host-to-switch links"},
      {"switch_length_m", ParamKind::length_m, true, "10", "length of switch-to-switch cables, metres"},
      {"switch_cable", ParamKind::text, true, "fibre", "cable profile of switch-to-switch links"},
  };
  own.insert(own.end(), common.begin(), common.end());
  return own;
}

const GeneratorType& type_named(std::string_view name) {
  for (const GeneratorType& t : generator_types()) {
    if (t.name == name) {
      return t;
    }
  }
  throw std::logic_error("no generator type " + std::string(name));
}

/// Reads the block's parameters of one generator type.
class ParamReader {
public:
  ParamReader(sim::JsonObjectReader& block, const GeneratorType& type) : block_(block), type_(type) {}

  std::optional<unsigned> count(std::string_view key) {
    const GeneratorParam& p = param(key);
    if (p.required) {
      return static_cast<unsigned>(block_.required_uint(key, p.min, p.max));
    }
    const auto v = block_.optional_uint(key, p.min, p.max);
    return v ? std::optional(static_cast<unsigned>(*v)) : std::nullopt;
  }

  std::vector<unsigned> extents(std::string_view key) {
    const nlohmann::json& array = block_.required_array(key, 1, 3);
    std::vector<unsigned> values;
    for (std::size_t i = 0; i < array.size(); ++i) {
      const nlohmann::json& e = array[i];
      if (!e.is_number_integer() || e.get<std::int64_t>() < 2 || e.get<std::int64_t>() > 65535) {
        throw sim::InputError(block_.file(), sim::json_pointer_append(block_.pointer_to(key), i),
                              "an integer in [2, 65535]", sim::describe_json_value(e));
      }
      values.push_back(e.get<unsigned>());
    }
    return values;
  }

  CommonOptions common() {
    CommonOptions c;
    c.switch_profile = block_.required_string("switch_profile");
    c.hca_profile = block_.required_string("hca_profile");
    if (const auto w = block_.optional_enum("width", {"1x", "2x", "4x", "8x", "12x"})) {
      c.width = link::parse_width(*w);
    }
    if (const auto s = block_.optional_enum("speed", {"SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR"})) {
      c.speed = link::parse_speed(*s);
    }
    c.host_length_m = length("host_length_m");
    c.host_cable = block_.required_string("host_cable");
    c.switch_length_m = length("switch_length_m");
    c.switch_cable = block_.required_string("switch_cable");
    return c;
  }

private:
  const GeneratorParam& param(std::string_view key) const {
    for (const GeneratorParam& p : type_.params) {
      if (p.key == key) {
        return p;
      }
    }
    throw std::logic_error("generator " + std::string(type_.name) + " has no parameter " + std::string(key));
  }

  double length(std::string_view key) {
    const double v =
        block_.required_double(key, std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max());
    if (!(v > 0 && v <= 1e6)) {
      throw sim::InputError(block_.file(), block_.pointer_to(key), "a length in metres, > 0 and <= 1000000",
                            sim::describe_json_value(block_.value().at(std::string(key))));
    }
    return v;
  }

  sim::JsonObjectReader& block_;
  const GeneratorType& type_;
};

Topology generate_type(sim::JsonObjectReader& block, const GeneratorType& type, Catalog& catalog) {
  ParamReader r(block, type);
  if (type.name == "fat-tree") {
    FatTreeOptions o;
    o.k = *r.count("k");
    o.levels = *r.count("levels");
    o.hosts_per_leaf = r.count("hosts_per_leaf");
    o.uplinks_per_leaf = r.count("uplinks_per_leaf");
    o.common = r.common();
    block.finish();
    return generate_fat_tree(o, catalog);
  }
  if (type.name == "leaf-spine") {
    LeafSpineOptions o;
    o.leaves = *r.count("leaves");
    o.spines = *r.count("spines");
    o.hosts_per_leaf = *r.count("hosts_per_leaf");
    o.parallel_links = r.count("parallel_links").value_or(1);
    o.common = r.common();
    block.finish();
    return generate_leaf_spine(o, catalog);
  }
  if (type.name == "dragonfly") {
    DragonflyOptions o;
    o.routers_per_group = *r.count("routers_per_group");
    o.hosts_per_router = *r.count("hosts_per_router");
    o.global_links_per_router = *r.count("global_links_per_router");
    o.groups = r.count("groups");
    o.common = r.common();
    block.finish();
    return generate_dragonfly(o, catalog);
  }
  GridOptions o;
  o.dims = r.extents("dims");
  o.hosts_per_switch = *r.count("hosts_per_switch");
  o.torus = type.name == "torus";
  o.common = r.common();
  block.finish();
  return generate_grid(o, catalog);
}

} // namespace

const std::vector<GeneratorType>& generator_types() {
  static const std::vector<GeneratorType> types = {
      {"fat-tree", "k-ary n-tree, n = 2 or 3, with optional leaf oversubscription",
       with_common({
           {"k", ParamKind::count, true, "", "arity: a full tree has k^n hosts and n*k^(n-1) switches of 2k ports", 1,
            127},
           {"levels", ParamKind::count, true, "", "switch levels n: 2 (leaf, spine) or 3 (leaf, spine, core)", 2, 3},
           {"hosts_per_leaf", ParamKind::count, false, "", "hosts per leaf; default k", 1, 253},
           {"uplinks_per_leaf", ParamKind::count, false, "",
            "uplinks per leaf, one per spine of its pod; default k (fewer: oversubscribed, fewer upper switches)", 1,
            253},
       })},
      {"leaf-spine", "leaves with hosts, each cabled to every spine",
       with_common({
           {"leaves", ParamKind::count, true, "", "number of leaf switches", 1, 65535},
           {"spines", ParamKind::count, true, "", "number of spine switches", 1, 254},
           {"hosts_per_leaf", ParamKind::count, true, "", "hosts per leaf", 1, 253},
           {"parallel_links", ParamKind::count, false, "", "links per leaf-spine pair; default 1", 1, 254},
       })},
      {"dragonfly", "groups of all-to-all routers joined by global links (Kim et al. 2008)",
       with_common({
           {"routers_per_group", ParamKind::count, true, "", "routers per group (a)", 1, 254},
           {"hosts_per_router", ParamKind::count, true, "", "hosts per router (p)", 1, 253},
           {"global_links_per_router", ParamKind::count, true, "", "global links per router (h)", 1, 253},
           {"groups", ParamKind::count, false, "", "groups (g), 2 to a*h+1; default a*h+1", 2, 1000000},
       })},
      {"torus", "1D (ring), 2D or 3D torus of switches with hosts",
       with_common({
           {"dims", ParamKind::extents, true, "",
            "switches per dimension, x first: [4, 4] (\"4x4\" on the command line)"},
           {"hosts_per_switch", ParamKind::count, true, "", "hosts per switch", 1, 248},
       })},
      {"mesh", "1D, 2D or 3D mesh of switches with hosts",
       with_common({
           {"dims", ParamKind::extents, true, "",
            "switches per dimension, x first: [4, 4] (\"4x4\" on the command line)"},
           {"hosts_per_switch", ParamKind::count, true, "", "hosts per switch", 1, 248},
       })},
  };
  return types;
}

Topology generate(sim::JsonObjectReader& block, Catalog& catalog) {
  const std::string type = block.required_enum("type", {"fat-tree", "leaf-spine", "dragonfly", "torus", "mesh"});
  try {
    return generate_type(block, type_named(type), catalog);
  } catch (const OptionError& e) {
    throw sim::InputError(block.file(), block.has(e.key()) ? block.pointer_to(e.key()) : block.pointer(), e.expected(),
                          e.got());
  }
}

} // namespace ib::topo
