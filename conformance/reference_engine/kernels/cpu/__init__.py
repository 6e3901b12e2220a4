"""C kernels of the CPU path, built on first use by ``native`` and called through
``ctypes``; each caller keeps a torch implementation for machines that cannot build
them."""
