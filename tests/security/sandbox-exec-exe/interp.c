/* A program of t-sandbox-exec-exe.sh whose PT_INTERP is /proc/self/exe
 * (linked with --dynamic-linker=/proc/self/exe): its execve makes the
 * kernel load, as its interpreter, whatever the execing process runs from.
 * Its own code never runs. */
void _start(void)
{
    for (;;) __asm__ volatile("syscall" : : "a"(60), "D"(99));
}
