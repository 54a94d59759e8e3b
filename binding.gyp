{
  "variables": {
    "sluice_asan%": "0"
  },
  "targets": [
    {
      "target_name": "sluice",
      "sources": [
        "src/deps/llhttp_api.c",
        "src/deps/llhttp_http.c",
        "src/deps/llhttp_llhttp.c",
        "src/core/address.cc",
        "src/core/output_queue.cc",
        "src/core/writer.cc",
        "src/core/connection.cc",
        "src/core/http1_session.cc",
        "src/core/listener.cc",
        "src/core/date_cache.cc",
        "src/core/response_serializer.cc",
        "src/core/pipe.cc",
        "src/core/http2_headers.cc",
        "src/core/http2_session.cc",
        "src/core/http2_pipe_body.cc",
        "src/core/http2_upgrade.cc",
        "src/core/file_source.cc",
        "src/core/http1_pipe_body.cc",
        "src/core/compressor.cc",
        "src/core/compress_job.cc",
        "src/core/compress_transform.cc",
        "src/core/compress_stream.cc",
        "src/binding/addon.cc",
        "src/binding/js_server.cc",
        "src/binding/js_connection.cc",
        "src/binding/js_values.cc",
        "src/binding/js_http2.cc",
        "src/binding/js_file.cc",
        "src/binding/js_compress.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "/usr/share/include/llhttp",
        "src"
      ],
      "defines": [
        "NAPI_VERSION=8",
        "LLHTTP_STRICT_MODE=1",
        "NAPI_DISABLE_CPP_EXCEPTIONS",
        "NODE_ADDON_API_DISABLE_DEPRECATED"
      ],
      "libraries": [ "-lnghttp2" ],
      "cflags": [ "-fvisibility=hidden", "-Wall", "-Wextra", "-O2" ],
      "cflags_c": [ "-std=c11" ],
      "cflags_cc": [ "-std=c++17", "-fvisibility-inlines-hidden", "-fno-exceptions" ],
      "cflags_cc!": [ "-fno-rtti", "-std=gnu++17" ],
      "ldflags": [ "-Wl,--exclude-libs,ALL" ],
      "conditions": [
        [ "sluice_asan==1", {
          "cflags": [ "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1" ],
          "ldflags": [ "-fsanitize=address,undefined" ]
        } ]
      ]
    }
  ]
}
