// `asnsim prove`: the deadlock prover's command line (prove_main.cc).
#pragma once

int prove_main(int argc, char** argv);
