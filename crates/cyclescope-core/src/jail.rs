//! What confines a process that runs code cyclescope does not trust (a candidate library's
//! worker, a compiler reading a submission's sources): the pieces the build jail and the
//! workers share. `cgroup` bounds a process and everything it starts together, from outside.

pub mod cgroup;
