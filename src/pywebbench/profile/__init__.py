"""Why a stack is as fast as it is: py-spy samples of one extra window per stack and workload
(`--profile`), their CPU split, flame graphs and the differential of two versions."""
