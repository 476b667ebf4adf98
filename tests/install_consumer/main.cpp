// consumer: prints the detected topology through an installed faiss-ccd.
#include <faiss/ccd_scheduler/Topology.h>

#include <cstdio>

int main() {
    faiss::ccd::Topology topo = faiss::ccd::Topology::detect();
    std::printf("%s\n", topo.describe().c_str());
    return 0;
}
