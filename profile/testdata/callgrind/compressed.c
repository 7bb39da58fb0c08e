/* The program behind compressed.out: recursion, and one function (`mix`) called from two
   places, so the folded stacks must split it between callers. */
#include <stdio.h>

__attribute__((noinline)) static unsigned mix(unsigned x) {
    for (int i = 0; i < 100; i++) x = x * 31u + 7u;
    return x;
}

__attribute__((noinline)) static unsigned recurse(unsigned depth, unsigned x) {
    return depth == 0 ? mix(x) : recurse(depth - 1, x + depth);
}

__attribute__((noinline)) static unsigned twice(unsigned x) { return mix(mix(x)); }

int main(void) {
    unsigned acc = 0;
    for (unsigned i = 0; i < 50; i++) acc ^= recurse(5, i) ^ twice(i);
    printf("%u\n", acc);
    return 0;
}
