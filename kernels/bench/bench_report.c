typedef int rt_kbench_placeholder;
