#include <cstdio>
int main() { std::puts("switchyard: under construction"); return 0; }
