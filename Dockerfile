# gpusched: built on Debian 12 with its packages, run on distroless (no shell, no package manager)
# as a non-root user.
#   docker build -t REGISTRY/gpusched:0.1.0 . && docker push REGISTRY/gpusched:0.1.0
#
# Pinned: the Debian packages at the versions scripts/deps.sh resolves on Debian 12 today (checked
# on the build machine with dpkg-query). The base images are pinned by tag only: their digests could
# not be checked here (no registry access, no Docker engine); pin them by digest where you build.
FROM debian:bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends \
      g++=4:12.2.0-3 cmake=3.25.1-1 ninja-build=1.11.1-2~deb12u1 pkg-config=1.8.1-1 \
      libboost1.81-dev=1.81.0-5+deb12u1 rapidjson-dev=1.1.0+dfsg2-7.1 libfmt-dev=9.1.0+ds1-2 \
      libyaml-cpp-dev=0.7.0+dfsg-8+b1 libssl-dev=3.0.22-1~deb12u2 libre2-dev=20220601+dfsg-1+b1 \
      libnghttp2-dev=1.52.0-1+deb12u3 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
COPY cmake ./cmake
COPY include ./include
COPY src ./src
RUN cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUSCHED_BUILD_TESTS=OFF -DGPUSCHED_BUILD_BENCH=OFF \
    && cmake --build build --target gpusched \
    && strip build/gpusched \
    && mkdir -p /out/lib && cp -L /usr/lib/x86_64-linux-gnu/libfmt.so.9 /usr/lib/x86_64-linux-gnu/libyaml-cpp.so.0.7 \
         /usr/lib/x86_64-linux-gnu/libre2.so.9 /usr/lib/x86_64-linux-gnu/libnghttp2.so.14 /out/lib/

# distroless/cc (Debian 12): glibc, libstdc++, libgcc, OpenSSL 3 and CA certificates; the four
# libraries gpusched needs beyond those (fmt, yaml-cpp, RE2, and nghttp2 for the agent's gRPC)
# come from the build stage, at the versions it linked.
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/lib/ /usr/lib/x86_64-linux-gnu/
COPY --from=build /src/build/gpusched /usr/local/bin/gpusched
USER 65532:65532
# The webhook listener (admission review, probes, /metrics). The extender listener is loopback only.
EXPOSE 8443
ENTRYPOINT ["/usr/local/bin/gpusched"]
CMD ["serve", "--in-cluster"]
