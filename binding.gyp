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
        "src/core/net/address.cc",
        "src/core/net/output_queue.cc",
        "src/core/net/writer.cc",
        "src/core/net/connection.cc",
        "src/core/net/read_buffers.cc",
        "src/core/net/tunnel_session.cc",
        "src/core/websocket/ws_frame_parser.cc",
        "src/core/websocket/ws_session.cc",
        "src/core/websocket/ws_connection_session.cc",
        "src/core/websocket/ws_hub.cc",
        "src/core/websocket/ws_deflate.cc",
        "src/core/websocket/ws_deflate_job.cc",
        "src/core/net/tls_context.cc",
        "src/core/net/tls_channel.cc",
        "src/core/http1/http1_parser.cc",
        "src/core/http1/http1_session.cc",
        "src/core/http1/line_fold_scanner.cc",
        "src/core/net/listener.cc",
        "src/core/server/http_session_factory.cc",
        "src/core/common/date_cache.cc",
        "src/core/common/symbol_origin.cc",
        "src/core/http1/response_serializer.cc",
        "src/core/body/pipe.cc",
        "src/core/http2/http2_headers.cc",
        "src/core/http2/http2_session.cc",
        "src/core/http2/frame_prescan.cc",
        "src/core/http2/http2_frame_rules.cc",
        "src/core/http2/http2_respond.cc",
        "src/core/http2/http2_stream.cc",
        "src/core/http2/http2_compression.cc",
        "src/core/http2/http2_pipe_body.cc",
        "src/core/http2/http2_upgrade.cc",
        "src/core/http2/http2_websocket.cc",
        "src/core/http2/nghttp2_link.cc",
        "src/core/http3/varint.cc",
        "src/core/http3/frames.cc",
        "src/core/http3/huffman.cc",
        "src/core/http3/qpack.cc",
        "src/core/http3/qpack_decoder.cc",
        "src/core/http3/message.cc",
        "src/core/body/file_source.cc",
        "src/core/files/open_file_cache.cc",
        "src/core/files/open_beneath.cc",
        "src/core/files/static_path.cc",
        "src/core/files/static_headers.cc",
        "src/core/files/content_types.cc",
        "src/core/files/static_files.cc",
        "src/core/http1/http1_pipe_body.cc",
        "src/core/compress/compressor.cc",
        "src/core/compress/accept_encoding.cc",
        "src/core/compress/compress_job.cc",
        "src/core/compress/compress_transform.cc",
        "src/core/compress/compress_stream.cc",
        "src/core/compress/worker_priority.cc",
        "src/core/compress/compress_gate.cc",
        "src/core/compress/brotli_alloc.cc",
        "src/core/common/glibc_baseline.cc",
        "src/core/quic/quic_symbols.cc",
        "src/core/quic/quic_endpoint.cc",
        "src/core/quic/quic_client.cc",
        "src/core/http3/http3_session.cc",
        "src/core/http3/http3_pipe_body.cc",
        "src/core/http3/http3_compression.cc",
        "src/binding/addon.cc",
        "src/binding/js_server.cc",
        "src/binding/js_connection.cc",
        "src/binding/js_values.cc",
        "src/binding/js_core_handle.cc",
        "src/binding/js_http1.cc",
        "src/binding/js_http2.cc",
        "src/binding/js_http2_session.cc",
        "src/binding/js_file.cc",
        "src/binding/js_static_mount.cc",
        "src/binding/js_compress.cc",
        "src/binding/js_tls.cc",
        "src/binding/js_websocket.cc",
        "src/binding/js_http3.cc",
        "src/binding/js_quic_client.cc"
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
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "cflags": [ "-fvisibility=hidden", "-Wall", "-Wextra", "-O2" ],
      "cflags_c": [ "-std=c11" ],
      "cflags_cc": [ "-std=c++17", "-fvisibility-inlines-hidden", "-fno-exceptions" ],
      "cflags_cc!": [ "-fno-rtti", "-std=gnu++17" ],
      "ldflags": [ "-Wl,--exclude-libs,ALL", "-Wl,-z,now",
                   "-Wl,--version-script=<(module_root_dir)/src/binding/exports.map" ],
      "conditions": [
        # Every translation unit starts with glibc_baseline.h: the addon's
        # glibc and libstdc++ imports stay at the 2.28 / GLIBCXX_3.4.25
        # baseline whatever the build machine has (docs/install.md).
        [ "OS=='linux'", {
          "cflags": [ "-include", "core/common/glibc_baseline.h" ]
        } ],
        [ "sluice_asan==1", {
          "cflags": [ "-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g", "-O1" ],
          "defines": [ "SLUICE_ASAN_BUILD=1" ],
          "ldflags": [ "-fsanitize=address,undefined" ]
        } ]
      ]
    }
  ]
}
