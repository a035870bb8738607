// `asnsim circuits`: 002 ch. 3's comparison of the TDM path reservation protocols.
#pragma once

int circuits_main(int argc, char** argv);
