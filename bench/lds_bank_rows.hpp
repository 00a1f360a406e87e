// bench/lds_bank_rows.hpp — the LDS bank report's rows and their JSON (the schema is in
// bench/lds_bank_report.cpp's header). Shared by the report and by bench/sweep.sh's amd-model
// mode, which costs its candidate tiles' accesses with the same bank model and writes the same
// rows for the CDNA model to read.
#pragma once
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "lds/shipped_accesses.hpp"

namespace vaeconv::lds_report {

using vaeconv::lds::AccessCost;
using vaeconv::lds::AccessSet;
using vaeconv::lds::Target;

struct Row {
  const AccessSet* set;
  std::string instr;
  AccessCost cost;
};

inline std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

inline std::vector<Row> rows_of(Target t, const std::vector<AccessSet>& sets) {
  std::vector<Row> rows;
  for (const AccessSet& s : sets)
    rows.push_back({&s, vaeconv::lds::instr_name(s.instrs.front().instr), vaeconv::lds::cost_of(t, s)});
  return rows;
}

inline std::string json(const std::vector<AccessSet>& sets) {
  std::ostringstream o;
  o << "{";
  const Target targets[] = {Target::kGfx942, Target::kGfx950};
  for (int ti = 0; ti < 2; ++ti) {
    o << (ti ? ",\n" : "\n") << "  \"" << vaeconv::lds::target_name(targets[ti]) << "\": [";
    const std::vector<Row> rows = rows_of(targets[ti], sets);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      o << (i ? ",\n" : "\n") << "    {\"layout\": \"" << r.set->layout << "\", \"tile\": \"" << r.set->tile
        << "\", \"elem_bytes\": " << r.set->elem_bytes << ", \"access\": \"" << r.set->access
        << "\", \"path\": \"" << r.set->path << "\", \"instr\": \"" << r.instr
        << "\", \"ways\": " << fixed(r.cost.ways, 4) << ", \"ways_max\": " << fixed(r.cost.ways_max, 4)
        << ", \"instrs_per_wave\": " << fixed(r.cost.instrs_per_wave, 2) << "}";
    }
    o << "\n  ]";
  }
  o << "\n}\n";
  return o.str();
}

}  // namespace vaeconv::lds_report
